package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/orket/orket/txn"
)

type recoverResult struct {
	Code     Code     `json:"code"`
	Action   string   `json:"action"` // nothing, restored, discarded
	RunID    string   `json:"run_id,omitempty"`
	Snapshot string   `json:"snapshot_ref,omitempty"`
	Phase    string   `json:"phase,omitempty"`
	Paths    []string `json:"paths,omitempty"`
	Verified bool     `json:"revert_verified"`
}

func recoverCommand(o *options, result *any) *cli.Command {
	var discard, wait bool
	return &cli.Command{
		Name:      "recover",
		Usage:     "restore the repository from an interrupted transaction",
		UsageText: "orket recover [--discard]",
		Description: `When an orket run was killed (kill -9, power loss, a crash), its snapshot
and journal are left behind and later runs refuse with E_RECOVERY_NEEDED.
recover puts the tree back exactly as it was before that run, then forgets
the snapshot. --discard forgets the snapshot and keeps the tree as it is.
With nothing to recover it says so and exits 0.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "discard", Usage: "forget the snapshot; keep the tree as it is", Destination: &discard, DisableDefaultText: true},
			&cli.BoolFlag{Name: "wait", Usage: "wait for a running orket to finish first", Destination: &wait, DisableDefaultText: true},
		},
		Action: func(c *cli.Context) error {
			res, err := runRecover(c.Context, o, discard, wait)
			if res != nil {
				*result = res
			}
			return err
		},
	}
}

func runRecover(ctx context.Context, o *options, discard, wait bool) (*recoverResult, error) {
	r, err := openRepo(o)
	if err != nil {
		return nil, err
	}
	unlock, err := r.Lock(ctx, true, wait, txn.Holder{RunID: "recover", PID: os.Getpid(), Started: time.Now(), Command: "orket recover"})
	if err != nil {
		if le, ok := err.(*txn.LockedError); ok {
			return nil, errorf(ELocked, "a run is still going; wait for it, or pass --wait", "%v", le)
		}
		return nil, &Error{Code: EInternal, Err: err, Msg: "take the repository lock: " + err.Error(), Hint: "check that .git is writable"}
	}
	defer unlock()
	j, err := r.ReadJournal()
	if err != nil {
		if !discard {
			return nil, &Error{Code: EInternal, Err: err, Msg: err.Error(), Hint: "orket recover --discard forgets it"}
		}
		j = &txn.Journal{}
	}
	res := &recoverResult{Code: OK, Action: "nothing"}
	if j == nil {
		if !o.quiet && !o.json {
			fmt.Fprintln(o.stdout, "nothing to recover")
		}
		return res, nil
	}
	res.RunID, res.Snapshot, res.Phase = j.RunID, j.Ref, j.Phase
	if discard {
		if j.Ref != "" {
			if err := r.DropSnapshot(j.Ref); err != nil {
				return nil, repoError(err)
			}
		}
		if err := r.ClearJournal(); err != nil {
			return nil, repoError(err)
		}
		res.Action = "discarded"
		if !o.quiet && !o.json {
			fmt.Fprintf(o.stdout, "discarded the snapshot of run %s; the tree is left as it is\n", j.RunID)
		}
		return res, nil
	}
	snap, err := r.LoadSnapshot(j.Ref)
	if err != nil {
		if j.Phase == txn.PhaseSnapshot {
			// Killed while taking the snapshot: nothing was written yet.
			if err := r.ClearJournal(); err != nil {
				return nil, repoError(err)
			}
			res.Action = "discarded"
			if !o.quiet && !o.json {
				fmt.Fprintf(o.stdout, "run %s stopped before it wrote anything; nothing to restore\n", j.RunID)
			}
			return res, nil
		}
		return nil, &Error{Code: EInternal, Err: err, Msg: "read snapshot " + j.Ref + ": " + err.Error(),
			Hint: "the snapshot is unreadable; orket recover --discard forgets it and keeps the tree as it is"}
	}
	rv, err := r.Revert(snap)
	if err != nil {
		return nil, &Error{Code: EInternal, Err: err, Msg: "restore from " + j.Ref + ": " + err.Error(),
			Hint: "run orket recover again; the snapshot is kept"}
	}
	if err := endTxn(r, j.Ref); err != nil {
		return nil, err
	}
	res.Action, res.Paths, res.Verified = "restored", rv.Paths, rv.Verified
	if !o.quiet && !o.json {
		fmt.Fprintf(o.stdout, "restored the tree as it was before run %s (%d path(s) put back, verified)\n", j.RunID, len(rv.Paths))
	}
	return res, nil
}
