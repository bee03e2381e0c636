package vpath

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
)

// The fixed virtual roots.
const (
	UserData     = "/mnt/user-data"
	Workspace    = "/mnt/user-data/workspace"
	Uploads      = "/mnt/user-data/uploads"
	Outputs      = "/mnt/user-data/outputs"
	ACPWorkspace = "/mnt/acp-workspace"
	// DefaultSkillsContainerPath is where skills appear unless
	// skills.container_path says otherwise.
	DefaultSkillsContainerPath = "/mnt/skills"
)

// MaxIDLen bounds user and thread ids.
const MaxIDLen = 64

// Limits on virtual paths, as the host file system would impose them.
const (
	maxPathLen    = 4096
	maxSegmentLen = 255
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidID reports whether id is a safe user or thread id: 1 to [MaxIDLen]
// characters from [A-Za-z0-9_-]. Such an id is one path segment that can
// never be "." or "..".
func ValidID(id string) bool {
	return len(id) > 0 && len(id) <= MaxIDLen && idPattern.MatchString(id)
}

// SafeUserID returns raw when it is a [ValidID], and otherwise DeerFlow's
// stable substitute "sanitized-" followed by 16 hex digits of its sha256,
// so that any authenticated identity maps to one safe folder.
func SafeUserID(raw string) string {
	if ValidID(raw) {
		return raw
	}
	sum := sha256.Sum256([]byte(raw))
	return "sanitized-" + hex.EncodeToString(sum[:8])
}

func checkIDs(user, thread string) error {
	if !ValidID(user) {
		return &Error{Kind: ErrInvalidID, Msg: fmt.Sprintf("Invalid user id %q: use 1-%d characters from A-Z, a-z, 0-9, _ and -", user, MaxIDLen)}
	}
	if !ValidID(thread) {
		return &Error{Kind: ErrInvalidID, Msg: fmt.Sprintf("Invalid thread id %q: use 1-%d characters from A-Z, a-z, 0-9, _ and -", thread, MaxIDLen)}
	}
	return nil
}

// Options configure a [Layout]. Only Home is required.
type Options struct {
	// Home is Antler's data directory (absolute, or made absolute against
	// the working directory).
	Home string
	// SkillsPath is the host skills directory holding public/ (and
	// DeerFlow's legacy global custom/). "" means no public or legacy
	// skills root.
	SkillsPath string
	// SkillsContainerPath is the virtual skills root; "" means
	// /mnt/skills.
	SkillsContainerPath string
	// Mounts are the configured sandbox.mounts. A container path may not
	// overlap /mnt/user-data, the skills root or /mnt/acp-workspace.
	Mounts []config.Mount
}

// Layout maps virtual paths to host paths. It is immutable after [New] and
// safe for concurrent use.
type Layout struct {
	home       string
	skillsPath string
	skillsRoot string
	mounts     []config.Mount
}

// New checks o and returns the layout.
func New(o Options) (*Layout, error) {
	if o.Home == "" {
		return nil, fmt.Errorf("vpath: home directory is required")
	}
	home, err := filepath.Abs(o.Home)
	if err != nil {
		return nil, fmt.Errorf("vpath: home: %w", err)
	}
	l := &Layout{home: home, skillsRoot: cmp.Or(o.SkillsContainerPath, DefaultSkillsContainerPath)}
	if o.SkillsPath != "" {
		if l.skillsPath, err = filepath.Abs(o.SkillsPath); err != nil {
			return nil, fmt.Errorf("vpath: skills path: %w", err)
		}
	}
	if err := checkContainerPath("skills container path", l.skillsRoot); err != nil {
		return nil, err
	}
	l.skillsRoot = path.Clean(l.skillsRoot)
	reserved := []string{UserData, ACPWorkspace, l.skillsRoot}
	for i, m := range o.Mounts {
		where := fmt.Sprintf("sandbox.mounts[%d].container_path", i)
		if err := checkContainerPath(where, m.ContainerPath); err != nil {
			return nil, err
		}
		cp := path.Clean(m.ContainerPath)
		if cp == "/" {
			return nil, fmt.Errorf("vpath: %s: %q would cover every path", where, m.ContainerPath)
		}
		for _, r := range reserved {
			if under(cp, r) || under(r, cp) {
				return nil, fmt.Errorf("vpath: %s: %q overlaps the reserved path %s", where, m.ContainerPath, r)
			}
		}
		if m.HostPath == "" {
			return nil, fmt.Errorf("vpath: sandbox.mounts[%d].host_path is required", i)
		}
		hp, err := filepath.Abs(m.HostPath)
		if err != nil {
			return nil, fmt.Errorf("vpath: sandbox.mounts[%d].host_path: %w", i, err)
		}
		l.mounts = append(l.mounts, config.Mount{HostPath: hp, ContainerPath: cp, ReadOnly: m.ReadOnly})
	}
	return l, nil
}

// FromConfig returns the layout for home and a loaded config: skills path
// from [config.Config.SkillsPath] (reading DEER_FLOW_SKILLS_PATH through
// getenv, nil meaning os.Getenv), skills.container_path and
// sandbox.mounts.
func FromConfig(home string, cfg *config.Config, getenv func(string) string) (*Layout, error) {
	if cfg == nil {
		cfg = config.Default()
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	return New(Options{
		Home:                home,
		SkillsPath:          cfg.SkillsPath(getenv),
		SkillsContainerPath: cfg.Skills.ContainerPath,
		Mounts:              cfg.Sandbox.Mounts,
	})
}

func checkContainerPath(where, p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("vpath: %s: %q must be absolute", where, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return fmt.Errorf("vpath: %s: %q must not contain a \"..\" segment", where, p)
		}
	}
	if strings.ContainsAny(p, "\\\x00") {
		return fmt.Errorf("vpath: %s: %q must not contain a backslash or NUL", where, p)
	}
	return nil
}

// Home returns the absolute home directory.
func (l *Layout) Home() string { return l.home }

// SkillsContainerPath returns the virtual skills root (/mnt/skills).
func (l *Layout) SkillsContainerPath() string { return l.skillsRoot }

// SkillsPath returns the host skills directory ("" when none).
func (l *Layout) SkillsPath() string { return l.skillsPath }

// Mounts returns the checked, absolute sandbox mounts.
func (l *Layout) Mounts() []config.Mount { return slices.Clone(l.mounts) }

// UserDir returns {home}/users/{user}.
func (l *Layout) UserDir(user string) (string, error) {
	if !ValidID(user) {
		return "", checkIDs(user, "x")
	}
	return filepath.Join(l.home, "users", user), nil
}

// UserCustomSkillsDir returns {home}/users/{user}/skills/custom.
func (l *Layout) UserCustomSkillsDir(user string) (string, error) {
	d, err := l.UserDir(user)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "skills", "custom"), nil
}

// IntegrationSkillsDir returns {home}/integrations/skills.
func (l *Layout) IntegrationSkillsDir() string {
	return filepath.Join(l.home, "integrations", "skills")
}

// ThreadPaths are the host folders of one thread.
type ThreadPaths struct {
	Base         string // {home}/users/{user}/threads/{thread}
	UserData     string // Base/user-data
	Workspace    string // Base/user-data/workspace
	Uploads      string // Base/user-data/uploads
	Outputs      string // Base/user-data/outputs
	ACPWorkspace string // Base/acp-workspace
}

// ThreadPaths returns the host folders of (user, thread) without touching
// the disk. It fails only for an invalid id.
func (l *Layout) ThreadPaths(user, thread string) (ThreadPaths, error) {
	if err := checkIDs(user, thread); err != nil {
		return ThreadPaths{}, err
	}
	base := filepath.Join(l.home, "users", user, "threads", thread)
	ud := filepath.Join(base, "user-data")
	return ThreadPaths{
		Base:         base,
		UserData:     ud,
		Workspace:    filepath.Join(ud, "workspace"),
		Uploads:      filepath.Join(ud, "uploads"),
		Outputs:      filepath.Join(ud, "outputs"),
		ACPWorkspace: filepath.Join(base, "acp-workspace"),
	}, nil
}

// EnsureThreadDirs creates the thread's folders (mode 0755 before umask)
// and returns them.
func (l *Layout) EnsureThreadDirs(user, thread string) (ThreadPaths, error) {
	tp, err := l.ThreadPaths(user, thread)
	if err != nil {
		return tp, err
	}
	for _, d := range []string{tp.Workspace, tp.Uploads, tp.Outputs, tp.ACPWorkspace} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return tp, fmt.Errorf("vpath: create thread folder: %w", err)
		}
	}
	return tp, nil
}

// RootKind tells what a [Root] is.
type RootKind int

// The root kinds.
const (
	KindUserData RootKind = iota + 1
	KindACP
	KindSkills
	KindMount
)

// Root is one virtual root of a thread.
type Root struct {
	// Virtual is the agent-visible path, without a trailing slash.
	Virtual string
	// Host is the host folder it maps to.
	Host string
	// Jail is the host folder every resolved path under this root must
	// stay in: Host itself for mounts and skills; the thread's own folder
	// (ThreadPaths.Base) for the three user-data roots and the ACP
	// workspace, so that a symlink from workspace to outputs is fine but
	// a user-data folder replaced by a symlink out of the thread (host
	// bash or an MCP stdio server can plant one) is refused.
	Jail     string
	ReadOnly bool
	Kind     RootKind
}

// Roots returns the roots of (user, thread), longest virtual path first.
func (l *Layout) Roots(user, thread string) ([]Root, error) {
	tp, err := l.ThreadPaths(user, thread)
	if err != nil {
		return nil, err
	}
	roots := []Root{
		{Virtual: Workspace, Host: tp.Workspace, Jail: tp.Base, Kind: KindUserData},
		{Virtual: Uploads, Host: tp.Uploads, Jail: tp.Base, Kind: KindUserData},
		{Virtual: Outputs, Host: tp.Outputs, Jail: tp.Base, Kind: KindUserData},
		{Virtual: ACPWorkspace, Host: tp.ACPWorkspace, Jail: tp.Base, ReadOnly: true, Kind: KindACP},
	}
	custom := filepath.Join(l.home, "users", user, "skills", "custom")
	roots = append(roots,
		Root{Virtual: l.skillsRoot + "/custom", Host: custom, Jail: custom, ReadOnly: true, Kind: KindSkills},
		Root{Virtual: l.skillsRoot + "/integrations", Host: l.IntegrationSkillsDir(), Jail: l.IntegrationSkillsDir(), ReadOnly: true, Kind: KindSkills},
	)
	if l.skillsPath != "" {
		pub := filepath.Join(l.skillsPath, "public")
		legacy := filepath.Join(l.skillsPath, "custom")
		roots = append(roots,
			Root{Virtual: l.skillsRoot + "/public", Host: pub, Jail: pub, ReadOnly: true, Kind: KindSkills},
			Root{Virtual: l.skillsRoot + "/legacy", Host: legacy, Jail: legacy, ReadOnly: true, Kind: KindSkills},
		)
	}
	for _, m := range l.mounts {
		roots = append(roots, Root{Virtual: m.ContainerPath, Host: m.HostPath, Jail: m.HostPath, ReadOnly: m.ReadOnly, Kind: KindMount})
	}
	slices.SortStableFunc(roots, func(a, b Root) int { return cmp.Compare(len(b.Virtual), len(a.Virtual)) })
	return roots, nil
}

// ChildRoots returns the roots directly below dir when dir is a proper
// ancestor of some roots (for example /mnt/skills), so that a listing of
// it can show them. It returns nil otherwise.
func (l *Layout) ChildRoots(user, thread, dir string) []Root {
	roots, err := l.Roots(user, thread)
	if err != nil {
		return nil
	}
	dir = path.Clean(strings.ReplaceAll(dir, "\\", "/"))
	var out []Root
	for _, r := range roots {
		if r.Virtual != dir && under(r.Virtual, dir) && !strings.Contains(strings.TrimPrefix(r.Virtual, dir+"/"), "/") {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Root) int { return cmp.Compare(a.Virtual, b.Virtual) })
	return out
}

// under reports whether p is base or below it, on segment boundaries.
func under(p, base string) bool {
	if base == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == base || strings.HasPrefix(p, base+"/")
}
