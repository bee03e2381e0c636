package cli

import (
	"strings"
	"time"

	"github.com/antlerhq/antler/community/browser"
)

// checkBrowser reports, when the config enables a browser tool, the
// Chromium the browser tools would start.
func (r *doctorReport) checkBrowser(a *app) {
	start := time.Now()
	for _, e := range a.cfg.Tools {
		if strings.HasPrefix(e.Use, "deerflow.community.browser_automation.") || strings.HasPrefix(e.Use, "antler:browser_") {
			if p, err := browser.FindChromium(); err != nil {
				r.add("browser", "chromium", "fail", err.Error()+"; the browser tools cannot run", start)
			} else {
				r.add("browser", "chromium", "ok", p, start)
			}
			return
		}
	}
}
