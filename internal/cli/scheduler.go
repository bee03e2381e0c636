package cli

import (
	"context"
	"fmt"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/gateway"
	"github.com/antlerhq/antler/scheduler"
	"github.com/antlerhq/antler/store"
)

// startScheduler serves the scheduled-task routes of gw from the app's
// store and, when the scheduler section is enabled, starts the
// dispatcher that fires due tasks (package scheduler). The dispatcher is
// closed with the app, after the gateway has stopped and ended its runs,
// before the store closes.
func (a *app) startScheduler(ctx context.Context, gw *gateway.Server) error {
	tasks, ok := a.store.(store.ScheduledTasks)
	if !ok {
		if a.cfg.Scheduler.Enabled {
			return &config.Error{File: a.cfg.Path, Key: "scheduler.enabled",
				Msg: fmt.Sprintf("the thread store (%T) cannot keep scheduled tasks", a.store)}
		}
		a.logger.Info("the thread store keeps no scheduled tasks: the scheduled-task routes answer 503")
		return nil
	}
	d, err := scheduler.New(scheduler.Options{Tasks: tasks, Runs: a.store, Launcher: gw, Config: a.cfg.Scheduler, Logger: a.logger})
	if err != nil {
		return err
	}
	gw.AttachScheduler(tasks, d)
	a.onClose(d.Close)
	if !a.cfg.Scheduler.Enabled {
		a.logger.Info("scheduler.enabled is false: scheduled tasks can be managed and triggered, but none fires on its own")
		return nil
	}
	if err := d.Start(ctx); err != nil {
		return err
	}
	a.logger.Info("scheduler started", "poll_interval_seconds", a.cfg.Scheduler.PollIntervalSeconds,
		"max_concurrent_runs", a.cfg.Scheduler.MaxConcurrentRuns, "multi_instance", a.cfg.Scheduler.MultiInstance)
	return nil
}
