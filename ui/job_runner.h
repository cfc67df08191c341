// The one way a view runs background work. start(tag, work, done) runs work(JobState&) on the
// thread pool with a fresh JobState (progress, phase, cancel) and hands its result to done() on
// the GUI thread - only while the receiver lives, and only if no newer job of the same tag was
// started (newest request wins: the older one is cancelled and its result dropped when it
// arrives). Nothing here ever waits: drop() and the destructor cancel and forget, so a new
// checkpoint or a closing view never stalls the GUI thread on a job that is still reading. Work
// must capture only values (shared_ptrs to what it reads), never the view.
#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QtConcurrent/QtConcurrentRun>
#include <map>
#include <memory>
#include <type_traits>
#include <utility>

#include "ui/job_state.h"

namespace ws::ui {

class JobRunner {
 public:
  // Results are delivered through watchers parented to `receiver` (so they die with it).
  explicit JobRunner(QObject* receiver) : receiver_(receiver) {}
  ~JobRunner() { dropAll(); }
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  template <class Work, class Done>
  std::shared_ptr<JobState> start(int tag, Work work, Done done) {
    using Result = std::invoke_result_t<Work&, JobState&>;
    Slot& slot = slots_[tag];
    if (slot.job) slot.job->cancel = true;  // superseded
    auto job = std::make_shared<JobState>();
    const uint64_t generation = ++slot.generation;
    slot.job = job;
    slot.running = true;
    auto* watcher = new QFutureWatcher<Result>(receiver_);
    QObject::connect(watcher, &QFutureWatcher<Result>::finished, receiver_, [this, watcher, tag, generation, done = std::move(done)]() mutable {
      watcher->deleteLater();
      Slot& s = slots_[tag];
      if (s.generation != generation) return;  // superseded or dropped
      s.running = false;
      done(watcher->result());
    });
    watcher->setFuture(QtConcurrent::run([job, work = std::move(work)]() mutable { return work(*job); }));
    return job;
  }

  // The state of the newest job of `tag` (a fresh one when none ran), and whether it still runs.
  const JobState& state(int tag) {
    Slot& s = slots_[tag];
    if (!s.job) s.job = std::make_shared<JobState>();
    return *s.job;
  }
  bool running(int tag) const {
    auto it = slots_.find(tag);
    return it != slots_.end() && it->second.running;
  }
  // Asks the newest job of `tag` to stop; its result (saying it was cancelled) is still delivered.
  void cancel(int tag) {
    if (auto it = slots_.find(tag); it != slots_.end() && it->second.job) it->second.job->cancel = true;
  }
  // Cancels the job of `tag` and forgets it: its result is dropped when it arrives.
  void drop(int tag) {
    cancel(tag);
    Slot& s = slots_[tag];
    ++s.generation;
    s.running = false;
  }
  void dropAll() {
    for (auto& [tag, s] : slots_) {
      if (s.job) s.job->cancel = true;
      ++s.generation;
      s.running = false;
    }
  }

 private:
  struct Slot {
    uint64_t generation = 0;
    std::shared_ptr<JobState> job;
    bool running = false;
  };
  QObject* receiver_;
  std::map<int, Slot> slots_;
};

}  // namespace ws::ui
