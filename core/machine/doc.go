// Package machine is the scheduler's machine: the core (package core),
// the rules of durable records (core/records), and everything their
// decisions cause — an attempt's context, a caller's answer, an event for
// the subscribers, a batch of records to write. It has no goroutine of its
// own (but the writer of its store, which commits record batches off its
// owner's turn and answers on CommittedC); its owner calls it from one
// goroutine, and every call runs in that owner's turn.
//
// It has two owners, and neither calls the other:
//
//   - package actor, the owner goroutine of one process: it takes its
//     callers' messages (Receive), the ends of the jobs it ran (Finish), in
//     batches (BeginBatch, EndBatch), runs the jobs the machine admits on
//     its runners (Config.StartLocal), and ends each turn (EndTurn);
//   - cluster mode's leader loop, the only owner that starts jobs
//     remotely: every durable job does (RegisterRemote); each turn applies what changed (Adopt, EndRemote,
//     Cancel…), takes the starts and revokes the machine made (TakeOps)
//     and the batch of records to write (TakeBatch, with
//     Config.OwnerCommits), and writes both in one fenced transaction,
//     reporting how it went (BatchWritten).
//
// Programs use the root package, github.com/fairsched/fairsched: its
// names for this package's errors and store types are the ones to use.
package machine
