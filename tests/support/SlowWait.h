// SPDX-License-Identifier: MIT
// How long a view test waits (QTRY_*_WITH_TIMEOUT) for what the window does in the background:
// candidates counted, patterns loaded, a layout from a worker thread. Far more than it takes on a
// loaded two-core machine (8 s seen); the wait ends as soon as the condition holds.
#pragma once

constexpr int kSlowWait = 60000;
