package skills

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/antlerhq/antler/config"
	"github.com/antlerhq/antler/vpath"
)

// ErrNotFound is wrapped by errors about a skill or supporting file that
// does not exist (DeerFlow raises FileNotFoundError for these).
var ErrNotFound = errors.New("not found")

// EnabledStateFunc returns the extensions file's skills map as skill name
// → enabled. A skill without an entry is enabled. It is called on every
// Load, so that a change made by another process is seen at once.
type EnabledStateFunc func(ctx context.Context) (map[string]bool, error)

// Options configures a Store. The zero value is a store with no public
// skills, custom skills under "./users" and every skill enabled.
type Options struct {
	// SkillsPath is the host skills directory (config.Config.SkillsPath);
	// public skills are read from its "public" folder. "" = none.
	SkillsPath string
	// Home is Antler's data directory; user u's custom skills live in
	// {Home}/users/{u}/skills/custom.
	Home string
	// ContainerPath is where skills appear in the sandbox; "" =
	// [vpath.DefaultSkillsContainerPath].
	ContainerPath string
	// EnabledState supplies the enable state; nil = every skill enabled.
	EnabledState EnabledStateFunc
	// Logger receives skipped-skill and scan warnings; nil discards.
	Logger *slog.Logger
}

// OptionsFromConfig returns the store options for a loaded config: the
// skills path resolved as config.Config.SkillsPath does (with getenv,
// nil = no environment) and the configured container path.
func OptionsFromConfig(cfg *config.Config, home string, getenv func(string) string, enabled EnabledStateFunc, logger *slog.Logger) Options {
	return Options{
		SkillsPath:    cfg.SkillsPath(getenv),
		Home:          home,
		ContainerPath: cfg.Skills.ContainerPath,
		EnabledState:  enabled,
		Logger:        logger,
	}
}

// Store discovers skills and owns every write to custom skills. It is
// safe for concurrent use. Writers must hold the skill's lock (Lock) for
// a whole read-validate-write sequence; the methods themselves only make
// each file write atomic.
type Store struct {
	// immutable after NewStore
	opts   Options
	logger *slog.Logger

	mu    sync.Mutex
	locks map[lockKey]*skillLock // guarded by mu
}

type lockKey struct{ user, name string }

type skillLock struct {
	mu   sync.Mutex
	refs int // guarded by Store.mu
}

// NewStore returns a store. It does not touch the file system.
func NewStore(opts Options) *Store {
	opts.ContainerPath = cmp.Or(opts.ContainerPath, vpath.DefaultSkillsContainerPath)
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Store{opts: opts, logger: logger, locks: map[lockKey]*skillLock{}}
}

// ContainerPath returns the sandbox path skills are listed under.
func (s *Store) ContainerPath() string { return s.opts.ContainerPath }

// PublicRoot returns the host folder of the public skills ("" if none).
func (s *Store) PublicRoot() string {
	if s.opts.SkillsPath == "" {
		return ""
	}
	return filepath.Join(s.opts.SkillsPath, string(CategoryPublic))
}

// LegacyRoot returns the host folder of the read-only legacy (shared,
// pre-isolation) custom skills ("" if none).
func (s *Store) LegacyRoot() string {
	if s.opts.SkillsPath == "" {
		return ""
	}
	return filepath.Join(s.opts.SkillsPath, string(CategoryCustom))
}

// CustomRoot returns the host folder of user's custom skills.
func (s *Store) CustomRoot(user string) string {
	return filepath.Join(s.opts.Home, "users", safeUserID(user), "skills", string(CategoryCustom))
}

// CustomDir returns the host folder of user's custom skill name. name
// must have passed ValidateName.
func (s *Store) CustomDir(user, name string) string {
	return filepath.Join(s.CustomRoot(user), name)
}

// HistoryFile returns the JSONL history file of user's custom skill name.
func (s *Store) HistoryFile(user, name string) string {
	return filepath.Join(s.CustomRoot(user), ".history", name+".jsonl")
}

// Lock takes the lock of user's skill name and returns its release
// function. Writers to one skill are serialised; different skills and
// different users never wait for each other.
func (s *Store) Lock(user, name string) (unlock func()) {
	k := lockKey{safeUserID(user), name}
	s.mu.Lock()
	l := s.locks[k]
	if l == nil {
		l = &skillLock{}
		s.locks[k] = l
	}
	l.refs++
	s.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(s.locks, k)
		}
		s.mu.Unlock()
	}
}

// Load discovers user's skills: public first, then legacy, then custom, a later
// category shadowing an earlier skill of the same name. Enabled is set
// from the enable state; the result is sorted by name. Malformed skills
// are skipped and logged. When the enable state cannot be read, every
// skill is returned as enabled together with the error, so that a
// listing can go on while a security decision (Policy) can fail closed.
func (s *Store) Load(ctx context.Context, user string) ([]Skill, error) {
	byName := map[string]Skill{}
	for _, c := range []struct {
		cat  Category
		root string
	}{{CategoryPublic, s.PublicRoot()}, {CategoryLegacy, s.LegacyRoot()}, {CategoryCustom, s.CustomRoot(user)}} {
		if c.root == "" {
			continue
		}
		for _, sk := range s.discover(ctx, c.cat, c.root) {
			byName[sk.Name] = sk
		}
	}
	state := map[string]bool{}
	var stateErr error
	if s.opts.EnabledState != nil {
		st, err := s.opts.EnabledState(ctx)
		if err != nil {
			s.logger.Warn("skills: cannot read enable state; treating every skill as enabled", "err", err)
			stateErr = fmt.Errorf("skills: read enable state: %w", err)
		} else {
			state = st
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, sk := range byName {
		enabled, ok := state[sk.Name]
		sk.Enabled = !ok || enabled
		out = append(out, sk)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, stateErr
}

// Enabled returns the enabled skills of Load.
func (s *Store) Enabled(ctx context.Context, user string) ([]Skill, error) {
	all, err := s.Load(ctx, user)
	return slices.DeleteFunc(all, func(sk Skill) bool { return !sk.Enabled }), err
}

// maxDiscoveryDepth bounds how deep discovery looks for SKILL.md files.
const maxDiscoveryDepth = 8

// discover walks root for SKILL.md files. A directory holding SKILL.md is
// a package boundary: nothing below it is registered. Hidden entries
// (".history") are skipped; directory symlinks are followed unless they
// lead back to a directory on the current branch.
func (s *Store) discover(ctx context.Context, cat Category, root string) []Skill {
	var out []Skill
	var walk func(dir, rel string, depth int, branch []string)
	walk = func(dir, rel string, depth int, branch []string) {
		if ctx.Err() != nil || depth > maxDiscoveryDepth {
			return
		}
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || slices.Contains(branch, real) {
			return
		}
		branch = append(branch, real)
		file := filepath.Join(dir, SkillFile)
		// A SKILL.md directly in the category root is not a package.
		if fi, err := os.Lstat(file); err == nil && depth > 0 {
			if !fi.Mode().IsRegular() {
				s.logger.Warn("skills: skipping SKILL.md that is not a regular file", "file", file)
				return
			}
			if sk, ok := s.parseFile(file, cat, rel); ok {
				out = append(out, sk)
			}
			return
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				s.logger.Warn("skills: cannot read directory", "dir", dir, "err", err)
			}
			return
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
				continue
			}
			walk(p, pathJoin(rel, e.Name()), depth+1, branch)
		}
	}
	walk(root, "", 0, nil)
	return out
}

func pathJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// maxSkillFileSize bounds the SKILL.md files discovery reads.
const maxSkillFileSize = 1 << 20

func (s *Store) parseFile(file string, cat Category, rel string) (Skill, bool) {
	fi, err := os.Stat(file)
	if err != nil {
		s.logger.Warn("skills: cannot stat SKILL.md", "file", file, "err", err)
		return Skill{}, false
	}
	if fi.Size() > maxSkillFileSize {
		s.logger.Warn("skills: skipping oversized SKILL.md", "file", file, "size", fi.Size())
		return Skill{}, false
	}
	data, err := os.ReadFile(file)
	if err != nil {
		s.logger.Warn("skills: cannot read SKILL.md", "file", file, "err", err)
		return Skill{}, false
	}
	sk, err := parseSkill(string(data), file)
	if err != nil {
		var pe *parseError
		if errors.As(err, &pe) {
			s.logger.Warn("skills: skipping malformed skill", "file", file, "line", pe.Line, "reason", pe.Msg, "hint", pe.Hint)
		} else {
			s.logger.Warn("skills: skipping malformed skill", "file", file, "err", err)
		}
		return Skill{}, false
	}
	sk.Category = cat
	sk.Dir = filepath.Dir(file)
	sk.File = file
	sk.RelPath = rel
	return sk, true
}

// Get returns user's skill name as Load sees it.
func (s *Store) Get(ctx context.Context, user, name string) (Skill, bool, error) {
	all, err := s.Load(ctx, user)
	for _, sk := range all {
		if sk.Name == name {
			return sk, true, err
		}
	}
	return Skill{}, false, err
}

// CustomExists reports whether user has a custom skill directory name
// with a SKILL.md.
func (s *Store) CustomExists(user, name string) bool {
	fi, err := os.Lstat(filepath.Join(s.CustomDir(user, name), SkillFile))
	return err == nil && fi.Mode().IsRegular()
}

// PublicExists reports whether a read-only skill (public or legacy) is
// named name.
func (s *Store) PublicExists(ctx context.Context, name string) bool {
	for _, c := range []struct {
		cat  Category
		root string
	}{{CategoryPublic, s.PublicRoot()}, {CategoryLegacy, s.LegacyRoot()}} {
		if c.root == "" {
			continue
		}
		for _, sk := range s.discover(ctx, c.cat, c.root) {
			if sk.Name == name {
				return true
			}
		}
	}
	return false
}

// EnsureEditable returns nil when user has a custom skill name, and
// DeerFlow's error otherwise: a built-in skill message, or a not-found
// error wrapping ErrNotFound.
func (s *Store) EnsureEditable(ctx context.Context, user, name string) error {
	if s.CustomExists(user, name) {
		return nil
	}
	if s.PublicExists(ctx, name) {
		return fmt.Errorf("'%s' is a built-in skill. To customise it, create a new skill with the same name under skills/custom/.", name)
	}
	return &notFoundError{fmt.Sprintf("Custom skill '%s' not found.", name)}
}

type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return ErrNotFound }

// ReadCustom returns the SKILL.md text of user's custom skill name.
func (s *Store) ReadCustom(user, name string) (string, error) {
	data, err := os.ReadFile(filepath.Join(s.CustomDir(user, name), SkillFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", &notFoundError{fmt.Sprintf("Custom skill '%s' not found.", name)}
	}
	return string(data), err
}

// SupportFile validates rel (relative, under assets/, references/,
// scripts/ or templates/, naming a file, with no ".." or empty segments;
// with portable set, every segment a valid Windows file name) and returns
// the host path of that supporting file of user's skill name. The
// resolved target (following any symlinks already on disk) must stay
// inside the support folder it names.
func (s *Store) SupportFile(user, name, rel string, portable bool) (string, error) {
	clean, err := checkSupportPath(rel, portable)
	if err != nil {
		return "", err
	}
	dir := s.CustomDir(user, name)
	top := strings.SplitN(clean, "/", 2)[0]
	target := filepath.Join(dir, filepath.FromSlash(clean))
	if err := within(dir, top, target); err != nil {
		return "", errors.New("Supporting file path must stay within the selected support directory.")
	}
	return target, nil
}

// within checks that target, with every symlink on its existing prefix
// resolved, lies inside the folder top of dir. dir is resolved but top is
// not: a support folder that is itself a symlink leads outside.
func within(dir, top, target string) error {
	rd, err := resolveExisting(dir)
	if err != nil {
		return err
	}
	rr := filepath.Join(rd, top)
	rt, err := resolveExisting(target)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(rr, rt)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return errors.New("outside")
	}
	return nil
}

// resolveExisting resolves symlinks in the longest existing prefix of p
// and appends the rest unchanged.
func resolveExisting(p string) (string, error) {
	p = filepath.Clean(p)
	var rest []string
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// WriteCustomFile atomically writes content to rel ("SKILL.md" or a
// checked supporting path) inside user's custom skill name, creating the
// package folders.
func (s *Store) WriteCustomFile(user, name, rel, content string) error {
	target := filepath.Join(s.CustomDir(user, name), filepath.FromSlash(rel))
	if rel != SkillFile {
		var err error
		if target, err = s.SupportFile(user, name, rel, true); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(target, []byte(content), 0o644)
}

// RemoveCustomFile removes a supporting file of user's skill name and
// returns its previous text ("" when it was not UTF-8 text).
func (s *Store) RemoveCustomFile(user, name, rel string) (string, error) {
	target, err := s.SupportFile(user, name, rel, false)
	if err != nil {
		return "", err
	}
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &notFoundError{fmt.Sprintf("Supporting file '%s' not found for skill '%s'.", rel, name)}
	}
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("Supporting file path '%s' is a directory, not a file.", rel)
	}
	prev, _ := readText(target)
	if err := os.Remove(target); err != nil {
		return "", err
	}
	return prev, syncDir(filepath.Dir(target))
}

// DeleteCustom removes user's custom skill name. The history file stays.
func (s *Store) DeleteCustom(user, name string) error {
	dir := s.CustomDir(user, name)
	// Rename first so that a reader never sees a half-deleted package.
	trash := filepath.Join(s.CustomRoot(user), ".trash-"+name+"-"+randomSuffix())
	if err := os.Rename(dir, trash); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return &notFoundError{fmt.Sprintf("Custom skill '%s' not found.", name)}
		}
		return err
	}
	if err := syncDir(s.CustomRoot(user)); err != nil {
		return err
	}
	return os.RemoveAll(trash)
}
