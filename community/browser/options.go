package browser

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/antlerhq/antler/community/netguard"
)

// Defaults and bounds of Options.
const (
	defaultTimeout  = 30 * time.Second
	maxTimeout      = 5 * time.Minute
	defaultWidth    = 1280
	defaultHeight   = 720
	maxViewportSide = 4096
	// DefaultMaxChars is browser_get_text's max_chars default, DeerFlow's.
	DefaultMaxChars = 8000
	// MaxMaxChars bounds max_chars.
	MaxMaxChars = 200_000
)

// Options are the keys of browser_navigate's config entry, which every
// browser tool reads (DeerFlow reads its launch and URL settings from
// that entry alone). The zero value launches a headless 1280x720
// Chromium with 30 s per action and the SSRF guard on.
type Options struct {
	// Headless (default true) runs Chromium without a window; false needs
	// a display (DISPLAY or WAYLAND_DISPLAY), else every call fails.
	Headless *bool `yaml:"headless"`
	// TimeoutMS bounds each navigation and interaction, in
	// milliseconds; 0 means 30000, at most 300000.
	TimeoutMS int `yaml:"timeout_ms"`
	// ViewportWidth and ViewportHeight are the window size (defaults
	// 1280 and 720, at most 4096).
	ViewportWidth  int `yaml:"viewport_width"`
	ViewportHeight int `yaml:"viewport_height"`
	// AllowPrivateAddresses turns the SSRF guard's address checks off,
	// for intentional internal targets.
	AllowPrivateAddresses bool `yaml:"allow_private_addresses"`
	// CDPURL is DeerFlow's attach-to-a-running-Chrome mode. Antler does
	// not implement it: with it set, every browser call is refused with
	// a message that says so (DeerFlow's own refusal first when
	// AllowUnguardedCDP is false).
	CDPURL            string `yaml:"cdp_url"`
	AllowUnguardedCDP bool   `yaml:"allow_unguarded_cdp"`

	// Resolver resolves host names for the guard; nil is
	// net.DefaultResolver. Tests make a name resolve to a public-looking
	// address.
	Resolver netguard.Resolver `yaml:"-"`
	// Dial connects to an address the guard checked; nil is a
	// net.Dialer. Tests route a public-looking address to a loopback
	// server; production code leaves it nil.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error) `yaml:"-"`
	// Outputs locates a thread's outputs folder (/mnt/user-data/outputs),
	// where browser_screenshot writes: a host folder that contains it
	// (the thread's folder) and its path relative to that folder. The
	// file is written through an os.Root at the containing folder, so an
	// outputs folder replaced by a symlink cannot lead the write
	// elsewhere. nil uses the thread's state (thread_data, set by its
	// first sandbox tool) alone.
	Outputs func(user, thread string) (dir, rel string, err error) `yaml:"-"`
}

// validate checks the bounds of o.
func (o Options) validate() error {
	var errs []error
	if o.TimeoutMS < 0 || time.Duration(o.TimeoutMS)*time.Millisecond > maxTimeout {
		errs = append(errs, fmt.Errorf("timeout_ms %d: want 0..%d", o.TimeoutMS, maxTimeout.Milliseconds()))
	}
	for _, side := range []struct {
		key string
		v   int
	}{{"viewport_width", o.ViewportWidth}, {"viewport_height", o.ViewportHeight}} {
		if side.v < 0 || side.v > maxViewportSide {
			errs = append(errs, fmt.Errorf("%s %d: want 0..%d", side.key, side.v, maxViewportSide))
		}
	}
	return errors.Join(errs...)
}

func (o Options) timeout() time.Duration {
	if o.TimeoutMS == 0 {
		return defaultTimeout
	}
	return time.Duration(o.TimeoutMS) * time.Millisecond
}

func (o Options) headless() bool { return o.Headless == nil || *o.Headless }

func (o Options) viewport() (int, int) {
	w, h := o.ViewportWidth, o.ViewportHeight
	if w == 0 {
		w = defaultWidth
	}
	if h == 0 {
		h = defaultHeight
	}
	return w, h
}

func (o Options) guard() *netguard.Guard {
	return &netguard.Guard{AllowPrivate: o.AllowPrivateAddresses, Resolver: o.Resolver, Action: "browse", Dial: o.Dial}
}

// cdpRefusal is the refusal of every call when cdp_url is set, "" when
// it is not.
func (o Options) cdpRefusal() string {
	if strings.TrimSpace(o.CDPURL) == "" {
		return ""
	}
	if !o.AllowUnguardedCDP {
		return "cdp_url uses a browser context where the SSRF request guard cannot be enforced; set allow_unguarded_cdp: true only for an explicitly trusted local Chrome session"
	}
	return "cdp_url (attaching to a running Chrome) is not supported by Antler; remove it from browser_navigate's config entry to launch a private Chromium"
}
