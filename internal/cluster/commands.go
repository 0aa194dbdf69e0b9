package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/fairsched/fairsched/core"
	"github.com/fairsched/fairsched/core/machine"
	"github.com/fairsched/fairsched/messages"
	"github.com/fairsched/fairsched/policy"
)

// Commands: what only the leader's scheduler can do — cancel a job, change
// a weight, pause a group, list, delete or requeue dead jobs — asked from
// any instance through the database. The settings (weights, pauses) are
// kept as rows too, and every new leader applies them before it decides.

// Command kinds.
const (
	cmdCancel        = "cancel"
	cmdKeyWeight     = "key_weight"
	cmdGroupWeight   = "group_weight"
	cmdResetGroups   = "reset_group_weights"
	cmdPause         = "pause_group"
	cmdResume        = "resume_group"
	cmdDeadList      = "dead_list"
	cmdDeadDelete    = "dead_delete"
	cmdDeadRequeue   = "dead_requeue"
	cmdSupersede     = "supersede"
	cmdExplain       = "explain"
	cmdStartCheck    = "start_check"
	settingKeyWeight = "key_weight/"
	settingGroup     = "group_weight/"
	settingPaused    = "paused/"
)

type cmdArgs struct {
	Type   policy.JobType `json:"type,omitempty"`
	ID     string         `json:"id,omitempty"`
	Key    string         `json:"key,omitempty"`
	Group  string         `json:"group,omitempty"`
	Weight float64        `json:"weight,omitempty"`
	Limit  int            `json:"limit,omitempty"`
	// Record is the job a Supersede enqueues in place of the pending one.
	Record *core.JobRecord `json:"record,omitempty"`
	// Policy is the policy a policy command applies (policy.go).
	Policy json.RawMessage `json:"policy,omitempty"`
	// Within is a start check's time left to its caller's deadline
	// (explain.go).
	Within time.Duration `json:"within,omitempty"`
}

type cmdReply struct {
	Err     string           `json:"err,omitempty"`
	Pending int              `json:"pending,omitempty"`
	Running int              `json:"running,omitempty"`
	N       int              `json:"n,omitempty"`
	Jobs    []core.JobRecord `json:"jobs,omitempty"`
	// Explanation answers an explain command (explain.go).
	Explanation *core.Explanation `json:"explanation,omitempty"`
	// Late refuses a start check (explain.go).
	Late *policy.LateStartError `json:"late,omitempty"`
}

// ErrNoLeader: a command found no leader to answer it in time.
var ErrNoLeader = errors.New("fairsched/cluster: no leader answered")

// ask sends a command to the leader and waits for its reply, polling the
// database (a beat at most between reads) until ctx ends.
func (n *Node) ask(ctx context.Context, kind string, args cmdArgs) (cmdReply, error) {
	data, err := json.Marshal(args)
	if err != nil {
		return cmdReply{}, err
	}
	id, err := n.b.Command(ctx, n.cfg.Domain, Command{Kind: kind, Args: data})
	if err != nil {
		return cmdReply{}, err
	}
	wait := 2 * time.Millisecond
	for {
		raw, ok, err := n.b.Reply(ctx, id)
		if err != nil {
			return cmdReply{}, err
		}
		if ok {
			var r cmdReply
			if err := json.Unmarshal(raw, &r); err != nil {
				return cmdReply{}, fmt.Errorf("%w: a command's reply does not decode: %w", machine.ErrStore, err)
			}
			if r.Err != "" {
				return r, remote(r.Err)
			}
			return r, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return cmdReply{}, fmt.Errorf("%w (%w)", ErrNoLeader, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, n.cfg.Poll)
	}
}

// remote is the error text a leader answered, matching the sentinel it
// names.
func remote(text string) error {
	for _, s := range append(sentinels, policy.ErrInvalidConfig, policy.ErrUnknownJobType, machine.ErrNoJobStore, machine.ErrDuplicateJob, policy.ErrUnknownJob) {
		if strings.Contains(text, s.Error()) {
			return &remoteError{text: text, err: s}
		}
	}
	return errors.New(text)
}

// askCtx bounds a command of a method that takes no context: long enough
// for a new leader to take over.
func (n *Node) askCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), n.cfg.LeaseTTL+n.cfg.LostAfter)
}

// Cancel asks the leader to cancel the jobs of (t, id): see
// fairsched.Scheduler.Cancel.
func (n *Node) Cancel(ctx context.Context, t policy.JobType, id string) (messages.CancelResult, error) {
	r, err := n.ask(ctx, cmdCancel, cmdArgs{Type: t, ID: id})
	return messages.CancelResult{Pending: r.Pending, Running: r.Running}, err
}

// SetKeyWeight asks the leader to weigh key.
func (n *Node) SetKeyWeight(key string, weight float64) error {
	ctx, cancel := n.askCtx()
	defer cancel()
	_, err := n.ask(ctx, cmdKeyWeight, cmdArgs{Key: key, Weight: weight})
	return err
}

// Group asks the leader to change a group (messages.GroupOpKind).
func (n *Node) Group(op messages.GroupOpKind, group string, weight int) error {
	kind := map[messages.GroupOpKind]string{messages.SetGroupWeight: cmdGroupWeight, messages.ResetGroupWeights: cmdResetGroups,
		messages.PauseGroup: cmdPause, messages.ResumeGroup: cmdResume}[op]
	ctx, cancel := n.askCtx()
	defer cancel()
	_, err := n.ask(ctx, kind, cmdArgs{Group: group, Weight: float64(weight)})
	return err
}

// Supersede asks the leader to replace the pending durable job of rec's
// (type, id) with rec (Enqueue with Supersede, when the insert found one):
// machine.ErrDuplicateJob if it runs.
func (n *Node) Supersede(ctx context.Context, rec *core.JobRecord) error {
	_, err := n.ask(ctx, cmdSupersede, cmdArgs{Type: rec.Type, ID: rec.ID, Record: rec})
	return err
}

// Dead asks the leader to list, delete or requeue dead jobs.
func (n *Node) Dead(ctx context.Context, op messages.DeadOpKind, t policy.JobType, id string, limit int) (messages.DeadResult, error) {
	kind := map[messages.DeadOpKind]string{messages.ListDead: cmdDeadList, messages.DeleteDead: cmdDeadDelete, messages.RequeueDead: cmdDeadRequeue}[op]
	r, err := n.ask(ctx, kind, cmdArgs{Type: t, ID: id, Limit: limit})
	return messages.DeadResult{Jobs: r.Jobs, N: r.N, Err: err}, err
}

// applySettings gives the leader's scheduler the domain's weights and
// pauses.
func (l *leader) applySettings(settings map[string][]byte) {
	if v, ok := settings[settingPolicy]; ok { // first: the weights and pauses set after it apply over it
		if err := l.applyStoredPolicy(v); err != nil {
			l.n.log.Warn("the stored policy no longer applies", zap.Error(err))
		}
	}
	for name, v := range settings {
		var err error
		var w float64
		_ = json.Unmarshal(v, &w)
		switch {
		case strings.HasPrefix(name, settingKeyWeight):
			err = l.m.SetKeyWeight(strings.TrimPrefix(name, settingKeyWeight), w)
		case strings.HasPrefix(name, settingGroup):
			err = l.m.Group(messages.SetGroupWeight, strings.TrimPrefix(name, settingGroup), int(w))
		case strings.HasPrefix(name, settingPaused):
			err = l.m.Group(messages.PauseGroup, strings.TrimPrefix(name, settingPaused), 0)
		}
		if err != nil {
			l.n.log.Warn("a setting no longer applies", zap.String("setting", name), zap.Error(err))
		}
	}
}

// runCommands runs the open commands cmds in order and answers each.
func (l *leader) runCommands(ctx context.Context, cmds []Command) {
	for _, c := range cmds {
		if l.unanswerable[c.ID] {
			continue // its answers were all refused: its asker gives up (ErrNoLeader)
		}
		var args cmdArgs
		var r cmdReply
		reset, settings := "", map[string][]byte{}
		if err := json.Unmarshal(c.Args, &args); err != nil {
			r.Err = fmt.Sprintf("%v: a command's arguments do not decode: %v", policy.ErrInvalidConfig, err)
		} else {
			weight, _ := json.Marshal(args.Weight)
			if err := l.runCommand(ctx, c.Kind, args, &r, &reset, settings, weight); err != nil {
				r.Err = err.Error()
			}
		}
		r.Err = policy.CleanText(r.Err) // the reply is stored, and read by another instance
		reply, _ := json.Marshal(r)
		err := l.n.b.Answer(ctx, l.n.cfg.Domain, l.epoch, c.ID, reply, reset, settings)
		if isRefused(err) {
			err = l.answerRefused(ctx, c, err)
		}
		if err != nil {
			l.n.log.Warn("answering a command failed", zap.Error(err))
			return
		}
	}
}

// answerRefused answers command c, whose answer the store refused for
// what it holds (its reply's text, a setting's name), with a reply that
// says so, and no setting: what the command changed applies on this
// leader only. A command whose every answer is refused is left unanswered
// and run no more by this leader, instead of again at every read.
func (l *leader) answerRefused(ctx context.Context, c Command, refusal error) error {
	l.n.log.Error("the store refused a command's answer; it is answered with the refusal", zap.Int64("command", c.ID),
		zap.String("kind", policy.CleanText(c.Kind)), zap.String("refusal", policy.CleanTextN(refusal.Error(), maxRefusalText)))
	reply, _ := json.Marshal(cmdReply{Err: fmt.Sprintf("%v: the command's answer could not be written (%s)", machine.ErrRecordRefused,
		policy.CleanTextN(refusal.Error(), maxRefusalText))})
	err := l.n.b.Answer(ctx, l.n.cfg.Domain, l.epoch, c.ID, reply, "", nil)
	if isRefused(err) {
		l.n.log.Error("the store refused a command's answer twice; it stays unanswered", zap.Int64("command", c.ID), zap.Error(err))
		if l.unanswerable == nil {
			l.unanswerable = map[int64]bool{}
		}
		l.unanswerable[c.ID] = true
		return nil
	}
	return err
}

// run runs one command on the leader's scheduler.
func (l *leader) runCommand(ctx context.Context, kind string, args cmdArgs, r *cmdReply, reset *string, settings map[string][]byte, weight []byte) error {
	m := l.m
	switch kind {
	case cmdPolicy:
		return l.runPolicy(ctx, args, settings)
	case cmdExplain:
		e, err := m.Explain(args.Type, args.ID)
		r.Explanation = &e
		return err
	case cmdStartCheck:
		return l.startCheck(args, r)
	case cmdCancel:
		res, err := m.Cancel(messages.Cancel{Type: args.Type, ID: args.ID})
		r.Pending, r.Running = res.Pending, res.Running
		return err
	case cmdKeyWeight:
		if err := m.SetKeyWeight(args.Key, args.Weight); err != nil {
			return err
		}
		settings[settingKeyWeight+args.Key] = weight
		if args.Weight == 1 {
			settings[settingKeyWeight+args.Key] = nil // the default: nothing to keep
		}
	case cmdGroupWeight:
		if err := m.Group(messages.SetGroupWeight, args.Group, int(args.Weight)); err != nil {
			return err
		}
		settings[settingGroup+args.Group] = weight
	case cmdResetGroups:
		if err := m.Group(messages.ResetGroupWeights, "", 0); err != nil {
			return err
		}
		*reset = settingGroup
	case cmdPause:
		if err := m.Group(messages.PauseGroup, args.Group, 0); err != nil {
			return err
		}
		settings[settingPaused+args.Group] = []byte("1")
	case cmdResume:
		if err := m.Group(messages.ResumeGroup, args.Group, 0); err != nil {
			return err
		}
		settings[settingPaused+args.Group] = nil
	case cmdDeadList, cmdDeadDelete:
		op := messages.ListDead
		if kind == cmdDeadDelete {
			op = messages.DeleteDead
		}
		res, err := m.Dead(messages.DeadOp{Op: op, Type: args.Type, ID: args.ID, Limit: args.Limit})
		r.Jobs, r.N = res.Jobs, res.N
		return err
	case cmdDeadRequeue:
		// Requeued as new jobs numbered by the database (the leader's own
		// numbers could meet another instance's), then deleted as dead.
		res, err := m.Dead(messages.DeadOp{Op: messages.ListDead, Type: args.Type, ID: args.ID})
		if err != nil {
			return err
		}
		// A job listed dead may not be written dead yet: its row would
		// still hold the (type, id) of an unfinished job, and the insert
		// below would take it for another.
		if _, err := m.Dead(messages.DeadOp{Op: messages.SyncDead}); err != nil {
			return err
		}
		for _, rec := range res.Jobs {
			fresh := rec
			fresh.Seq, fresh.State, fresh.Attempt, fresh.EndedAttempt, fresh.Interruptions, fresh.LastError = 0, core.RecordPending, 0, 0, 0, ""
			fresh.EnqueuedAt, fresh.RunAt, fresh.FinishedAt = time.Now(), time.Time{}, time.Time{}
			if err := l.n.b.Insert(ctx, &fresh); err != nil {
				if errors.Is(err, machine.ErrDuplicateJob) {
					continue // an unfinished job of the (type, id) exists
				}
				return err
			}
			if _, err := m.Dead(messages.DeadOp{Op: messages.DeleteDead, Type: rec.Type, ID: rec.ID}); err != nil {
				return err
			}
			r.N++
		}
	case cmdSupersede:
		if args.Record == nil {
			return fmt.Errorf("%w: a supersede without its record", policy.ErrInvalidConfig)
		}
		res, err := m.ReplacePending(args.Type, args.ID)
		if err != nil {
			return err
		}
		if res.N == 0 {
			return fmt.Errorf("%w: %s/%s is running", machine.ErrDuplicateJob, args.Type, args.ID)
		}
		rec := *args.Record
		return l.n.b.Insert(ctx, &rec) // numbered by the database, adopted from the feed
	default:
		return fmt.Errorf("%w: unknown command %q", policy.ErrInvalidConfig, kind)
	}
	return nil
}
