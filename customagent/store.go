package customagent

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/vpath"
)

// The files of an agent folder.
const (
	configFileName = "config.yaml"
	soulFileName   = "SOUL.md"
)

// ErrNotFound is returned (wrapped) for an agent that has no config.yaml.
var ErrNotFound = errors.New("agent not found")

// Agent is a loaded custom agent.
type Agent struct {
	Config *Config
	// Soul is SOUL.md as stored ("" when the file is missing); DeerFlow
	// trims it before putting it in the prompt.
	Soul string
	// Legacy is set for an agent read from DeerFlow's shared pre-isolation
	// layout {home}/agents/{name}/, which is read-only.
	Legacy bool
}

// Change is what [Store.Update] writes. A nil field leaves that file as it
// is.
type Change struct {
	Config *Config
	Soul   *string
}

// Options configure a [Store]. The zero value is ready to use.
type Options struct {
	// Logger receives recovery and cleanup diagnostics; nil discards.
	Logger *slog.Logger
}

// Store reads and writes the custom agents under a home directory. It is
// safe for concurrent use, also by several processes sharing the home.
type Store struct {
	layout *vpath.Layout // immutable after New
	logger *slog.Logger  // immutable after New
	locks  locks

	// testHook, if set, is called at each step of an update and of
	// recovery; an error aborts the update there (tests inject failures
	// and observe serialisation through it).
	testHook func(step string) error
}

// New returns the store of layout's home.
func New(layout *vpath.Layout, opts Options) *Store {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{layout: layout, logger: logger}
}

// AgentsDir returns {home}/users/{user}/agents.
func (s *Store) AgentsDir(user string) (string, error) {
	d, err := s.layout.UserDir(user)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "agents"), nil
}

// Dir returns the folder of the user's agent name (which it validates).
func (s *Store) Dir(user, name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	d, err := s.AgentsDir(user)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, dirName(name)), nil
}

// LegacyDir returns DeerFlow's shared pre-isolation folder
// {home}/agents/{name}.
func (s *Store) LegacyDir(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	return filepath.Join(s.layout.Home(), "agents", dirName(name)), nil
}

// DefaultSoulPath returns {home}/SOUL.md, the default agent's soul.
func (s *Store) DefaultSoulPath() string { return filepath.Join(s.layout.Home(), soulFileName) }

// WriteDefaultSoul replaces the default agent's SOUL.md atomically.
func (s *Store) WriteDefaultSoul(soul string) error {
	if err := os.MkdirAll(s.layout.Home(), 0o755); err != nil {
		return err
	}
	return config.WriteFileAtomic(s.DefaultSoulPath(), []byte(soul), 0o644)
}

// Exists reports whether the user has an agent name of their own (a
// folder with config.yaml, or an update committed for it).
func (s *Store) Exists(user, name string) (bool, error) {
	a, err := s.Load(user, name)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	var ce *ConfigError
	if errors.As(err, &ce) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return !a.Legacy, nil
}

// LegacyOnly reports whether name exists only in DeerFlow's shared legacy
// layout (no config.yaml in the user's own folder), which update_agent
// refuses to fork.
func (s *Store) LegacyOnly(user, name string) bool {
	dir, err := s.Dir(user, name)
	if err != nil {
		return false
	}
	legacy, _ := s.LegacyDir(name)
	if !fileExists(filepath.Join(legacy, configFileName)) {
		return false
	}
	_, err = s.loadOwn(user, name, dir)
	return errors.Is(err, ErrNotFound)
}

// Load reads the user's agent name: the per-user folder first (finishing
// or discarding an interrupted update under the agent's lock), then the
// legacy shared layout. A missing agent is ErrNotFound; an unusable
// config.yaml a *[ConfigError].
func (s *Store) Load(user, name string) (*Agent, error) {
	dir, err := s.Dir(user, name)
	if err != nil {
		return nil, err
	}
	a, err := s.loadOwn(user, name, dir)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if a != nil {
		return a, nil
	}
	legacy, _ := s.LegacyDir(name)
	if fileExists(filepath.Join(legacy, configFileName)) {
		a, err := readAgent(legacy, name)
		if err != nil {
			return nil, err
		}
		a.Legacy = true
		return a, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
}

// loadOwn reads the per-user folder under the agent lock; it returns
// (nil, ErrNotFound) when the folder holds no agent.
func (s *Store) loadOwn(user, name, dir string) (*Agent, error) {
	if _, err := os.Stat(dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ErrNotFound
		}
		return nil, err
	}
	unlock, err := s.lock(user, name)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.recover(dir); err != nil {
		return nil, err
	}
	if !fileExists(filepath.Join(dir, configFileName)) {
		return nil, ErrNotFound
	}
	return readAgent(dir, name)
}

func readAgent(dir, name string) (*Agent, error) {
	data, err := os.ReadFile(filepath.Join(dir, configFileName))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %q", ErrNotFound, name)
		}
		return nil, err
	}
	cfg, err := parseConfig(data, name)
	if err != nil {
		return nil, err
	}
	soul, err := os.ReadFile(filepath.Join(dir, soulFileName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return &Agent{Config: cfg, Soul: string(soul)}, nil
}

// List returns the user's agents sorted by name: their own, then legacy
// shared agents they do not shadow. An agent that cannot be read is
// skipped with a warning.
func (s *Store) List(user string) ([]*Agent, error) {
	agentsDir, err := s.AgentsDir(user)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []*Agent
	for _, root := range []string{agentsDir, filepath.Join(s.layout.Home(), "agents")} {
		entries, err := os.ReadDir(root)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, e := range entries {
			n := e.Name()
			if !e.IsDir() || strings.HasPrefix(n, ".") || seen[n] || ValidateName(n) != nil {
				continue
			}
			a, err := s.Load(user, n)
			if err != nil {
				if !errors.Is(err, ErrNotFound) {
					s.logger.Warn("skipping custom agent", "user", user, "agent", n, "err", err)
				}
				continue
			}
			seen[n] = true
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *Agent) int { return strings.Compare(a.Config.Name, b.Config.Name) })
	return out, nil
}

// lock takes the agent's lock; the lock file is {agents}/.{name}.lock
// beside the agent folder (so it exists before the folder does and is
// never part of an agent).
func (s *Store) lock(user, name string) (func(), error) {
	agentsDir, err := s.AgentsDir(user)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(agentsDir, 0o755); err != nil {
		return nil, err
	}
	dn := dirName(name)
	return s.locks.lock(user+"/"+dn, filepath.Join(agentsDir, "."+dn+".lock"))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
