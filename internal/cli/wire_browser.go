package cli

import (
	"github.com/antlerhq/antler/agent"
	"github.com/antlerhq/antler/community/browser"
)

// wireBrowser makes the browser tools' session manager, closed with the
// app. No browser starts until a browser tool needs one, so it costs
// nothing when the config enables none.
func (a *app) wireBrowser() {
	a.browsers = browser.NewManager(browser.ManagerOptions{Logger: a.logger})
	a.onClose(a.browsers.Close)
}

// closeBrowser closes the thread's browser session when its run ends,
// whatever the outcome (the lead factory's RunEnded): a browser lives
// for one run of its thread.
func (a *app) closeBrowser(in agent.Input, _ *agent.Outcome, _ error) {
	if a.browsers != nil && a.browsers.CloseThread(in.ThreadID) {
		a.logger.Debug("closed the thread's browser session at the end of its run", "thread_id", in.ThreadID)
	}
}
