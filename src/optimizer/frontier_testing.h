// Seams for tests of how frontier.cc makes its plans: the plans made while
// the sweep runs (EarlySlices), and how many are made. Not for production
// use.
#pragma once

namespace perseus::optimizer {

// While nonzero, every record time predicted during the sweep but the
// all-max time is moved by this relative amount (the slices keep their
// sizes), so that no slice made early has the finished sweep's times and
// each is made again: the path a prediction that turned out wrong takes.
// Set it only while no solve runs.
void SetEarlyTimesShiftForTesting(double relative);
// Slices made during the sweep and not taken, since the process started:
// their times were not the finished sweep's, or they were cut short (the
// recording stopped). Each was made again where still needed.
long EarlySlicesRemadeForTesting();
// While true, the sweep waits after offering each slice to the workers
// until one has started it, so that slices are made during the sweep
// however loaded the machine is (with two threads or more). Set it only
// while no solve runs.
void SetEarlySlicesStartDuringTheSweepForTesting(bool wait);
// Discrete plans made for the recording (each Discretizer::Run of a
// slice, taken or not), since the process started.
long PlansMadeForTesting();

}  // namespace perseus::optimizer
