package cli

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/antlerhq/antler/config"
)

// This file is the rule that nothing which restricts is ignored in
// silence, at the command line: serve, run and chat refuse to start on a
// restrictive section Antler does not enforce (config.IgnoredSection),
// and every command that reports the config (doctor, tools list, the
// start of serve) names each section it ignores. See docs/differences.md,
// "Sections Antler does not implement".

// ignoredNotice is one section or hook key the app ignores.
type ignoredNotice struct {
	name, where, status, detail string
	refused                     bool
}

// ignoredNotices lists the ignored sections of config.yaml and the hook
// keys of extensions_config.json, in that order, each with the status
// doctor gives it: fail when it stops serve, run and chat, warn
// otherwise.
func (a *app) ignoredNotices() []ignoredNotice {
	var out []ignoredNotice
	for _, s := range a.cfg.IgnoredSections {
		n := ignoredNotice{name: s.Name, where: position(s.File, s.Line), status: "warn", refused: s.Refused()}
		switch {
		case s.Refused():
			n.status = "fail"
			n.detail = "restricts and is not enforced; serve, run and chat refuse to start (" + s.Reason + "); name it in allow_unenforced to accept"
		case s.Allowed:
			n.detail = "restricts and is NOT enforced (accepted by allow_unenforced): " + s.Reason
		default:
			n.detail = "ignored, restricts nothing: " + s.Reason
		}
		out = append(out, n)
	}
	ext := a.loadedExtensions()
	if ext == nil {
		return out
	}
	for _, h := range []struct {
		key, allow string
		list       []string
	}{
		{"middlewares", config.AllowExtensionMiddlewares, ext.Middlewares},
		{"mcpInterceptors", config.AllowExtensionMCPInterceptors, ext.MCPInterceptors},
	} {
		if len(h.list) == 0 {
			continue
		}
		n := ignoredNotice{name: h.allow, where: position(ext.Path, ext.HookLines[h.key]), status: "warn",
			detail: fmt.Sprintf("Python hooks %v are NOT run (accepted by allow_unenforced)", h.list)}
		if !slices.Contains(a.cfg.AllowUnenforced, h.allow) {
			n.status, n.refused = "fail", true
			n.detail = fmt.Sprintf("Python hooks %v may restrict what runs and are not run; serve, run and chat refuse to start; name %s in allow_unenforced to accept", h.list, h.allow)
		}
		out = append(out, n)
	}
	return out
}

// loadedExtensions is the extensions file, or nil when there is none or
// it does not load (doctor reports that on its own line).
func (a *app) loadedExtensions() *config.Extensions {
	if a.extensions == nil || a.paths.Extensions == "" {
		return nil
	}
	ext, _, err := a.extensions.Get()
	if err != nil {
		return nil
	}
	return ext
}

// refuseUnenforced is the start of serve, run and chat: a restrictive
// section or hook that allow_unenforced does not name is a configuration
// error (exit 2) that names the file, the line, the section and why; the
// others are logged as warnings.
func (a *app) refuseUnenforced() error {
	var errs []error
	if err := a.cfg.UnenforcedError(); err != nil {
		errs = append(errs, err)
	}
	if err := a.loadedExtensions().UnenforcedError(a.cfg.AllowUnenforced); err != nil {
		errs = append(errs, err)
	}
	if err := a.mcpTasksError(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, n := range a.ignoredNotices() {
		a.logger.Warn("config: section not implemented by Antler", "section", n.name, "at", n.where, "detail", n.detail)
	}
	return nil
}

// writeIgnored prints one line per ignored section to w (tools list
// writes them to stderr, so that its output stays the tool list).
func (a *app) writeIgnored(w io.Writer) {
	for _, n := range a.ignoredNotices() {
		fmt.Fprintf(w, "antler: %s: %s: %s\n", n.where, n.name, n.detail)
	}
}

// position is "file:line", or the file alone when the line is unknown.
func position(file string, line int) string {
	if line <= 0 {
		return file
	}
	return file + ":" + strconv.Itoa(line)
}
