// Package browser is DeerFlow's agentic browser automation
// (community/browser_automation): eight tools that drive a real Chromium
// through the DevTools protocol (github.com/chromedp/chromedp), so that the
// model can navigate, read, click and type on live pages and save
// screenshots into the thread's outputs folder.
//
// A [Manager], owned by the program and closed with it, keeps at most one
// browser session per thread: its own Chromium process with a fresh
// profile, so threads never share cookies or pages. Sessions are bounded
// in number, evicted when idle, closed by browser_close and by
// [Manager.CloseThread] when the thread's run ends. Every action has a
// timeout, and every text the model reads is bounded.
//
// Each session's Chromium sends all of its traffic through a small
// forward proxy of its own (proxy.go) whose connections go through
// package netguard: top-level navigations, redirects, subresources,
// frames, popups and WebSockets to private, loopback or metadata
// addresses are refused at the socket, after the proxy's own DNS lookup,
// so neither redirects nor DNS rebinding get around the guard.
//
// Start with [NewManager] and [NewTools]; toolset registers the tools
// under DeerFlow's use strings.
package browser
