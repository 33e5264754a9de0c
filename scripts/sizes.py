#!/usr/bin/env python3
# Files over ~800 lines and functions over ~100 lines in core/, patterns/, views/ and app/
# (docs/DESIGN.md, "Size limits"). A heuristic brace matcher, good enough for this code base.
#   scripts/sizes.py [FUNCTION_LIMIT [FILE_LIMIT]]
import re,sys,os
# crude: function bodies = '{' opening at line end where the header line starts at col 0 or lambda-less; track brace depth
FN = int(sys.argv[1]) if len(sys.argv) > 1 else 100
FILE = int(sys.argv[2]) if len(sys.argv) > 2 else 800
os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
res=[]
big=[]
for root in ['core', 'patterns', 'views', 'app']:
  for dp,dn,fn in os.walk(root):
    for f in fn:
      if not f.endswith(('.cpp','.h')): continue
      p=os.path.join(dp,f); lines=open(p,errors='replace').read().split('\n')
      if len(lines) > FILE: big.append((len(lines), p))
      depth=0; start=None; sdepth=None; name=None
      for i,l in enumerate(lines):
        s=re.sub(r"'(\\.|[^'\\])'","''",l); s=re.sub(r'"(\\.|[^"\\])*"','""',s); s=re.sub(r'//.*','',s)
        for ch in s:
          if ch=='{':
            if start is None:
              # decide if function: look back for ')' in header
              hdr=' '.join(lines[max(0,i-3):i+1])
              if re.search(r'\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>,\s\*&]+)?\s*(:.*)?\{',hdr) and not re.search(r'^\s*(if|for|while|switch|else|do)\b',l) and not re.search(r'\b(namespace|class|struct|enum)\b',l):
                start=i; sdepth=depth; name=l.strip()[:90]
            depth+=1
          elif ch=='}':
            depth-=1
            if start is not None and depth==sdepth:
              n=i-start+1
              if n>FN: res.append((n,p,start+1,name))
              start=None
for r in sorted(res,reverse=True): print(*r)
for b in sorted(big,reverse=True): print('file', *b)
