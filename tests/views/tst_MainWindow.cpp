#include <QtTest>
class T : public QObject { Q_OBJECT private Q_SLOTS: void a() {} };
QTEST_GUILESS_MAIN(T)
#include "tst_MainWindow.moc"
