package customagent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// The folders of an update in progress, inside the agent folder. Their
// names start with a dot so that DeerFlow and Store.List never take them
// for agents or agent files.
const (
	stagingDir = ".staging" // being written; discarded by recovery
	commitDir  = ".commit"  // committed; recovery renames its files into place
)

// committedFiles are the only names recovery moves out of .commit.
var committedFiles = []string{configFileName, soulFileName}

// Update writes ch to the user's agent name, creating the agent folder if
// needed (an upsert, as DeerFlow's store). Both files change together or
// not at all, also across a crash:
//
//  1. every new file is written into .staging and synced, then the folder
//     is synced;
//  2. .staging is renamed to .commit and the agent folder synced — the
//     commit point;
//  3. each file in .commit is renamed over its old version, the folder
//     synced and .commit removed.
//
// Recovery (run under the agent's lock before every read and update)
// removes a .staging folder and finishes a .commit one, so after a crash
// at any point the agent is entirely old or entirely new. A failure before
// the commit point leaves the old files untouched (and removes a folder
// this call created); a failure after it is logged and finished by the
// next access, since the update is already committed.
func (s *Store) Update(user, name string, ch Change) error {
	dir, err := s.Dir(user, name)
	if err != nil {
		return err
	}
	if ch.Config == nil && ch.Soul == nil {
		return nil
	}
	unlock, err := s.lock(user, name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.recover(dir); err != nil {
		return err
	}
	return s.updateLocked(user, name, dir, ch)
}

// Modify is a read-merge-write of the user's own agent name under the
// agent's lock: fn receives the agent as stored now (nil when the user's
// folder holds none; never a legacy agent) and returns the change to
// write, so that two concurrent modifications of different fields cannot
// lose each other's write. An error from fn (or an unreadable
// config.yaml, a *[ConfigError]) is returned and nothing is written.
func (s *Store) Modify(user, name string, fn func(current *Agent) (Change, error)) error {
	dir, err := s.Dir(user, name)
	if err != nil {
		return err
	}
	unlock, err := s.lock(user, name)
	if err != nil {
		return err
	}
	defer unlock()
	if err := s.recover(dir); err != nil {
		return err
	}
	var cur *Agent
	if fileExists(filepath.Join(dir, configFileName)) {
		if cur, err = readAgent(dir, name); err != nil {
			return err
		}
	}
	ch, err := fn(cur)
	if err != nil {
		return err
	}
	if ch.Config == nil && ch.Soul == nil {
		return nil
	}
	return s.updateLocked(user, name, dir, ch)
}

// updateLocked writes ch into dir; the caller holds the agent's lock and
// has run recovery.
func (s *Store) updateLocked(user, name, dir string, ch Change) error {
	var cfgData []byte
	if ch.Config != nil {
		var err error
		if cfgData, err = ch.Config.Marshal(); err != nil {
			return err
		}
	}
	_, statErr := os.Stat(dir)
	created := errors.Is(statErr, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := s.stage(dir, cfgData, ch.Soul); err != nil {
		_ = os.RemoveAll(filepath.Join(dir, stagingDir))
		if created {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	if err := s.step("commit"); err != nil {
		_ = os.RemoveAll(filepath.Join(dir, stagingDir))
		if created {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	if err := os.Rename(filepath.Join(dir, stagingDir), filepath.Join(dir, commitDir)); err != nil {
		_ = os.RemoveAll(filepath.Join(dir, stagingDir))
		if created {
			_ = os.RemoveAll(dir)
		}
		return fmt.Errorf("commit agent update: %w", err)
	}
	_ = syncDir(dir)
	if err := s.apply(dir); err != nil {
		s.logger.Error("custom agent update committed but not applied; the next access finishes it",
			"user", user, "agent", name, "err", err)
	}
	return nil
}

// stage writes the new files into a fresh .staging folder and syncs them.
func (s *Store) stage(dir string, cfgData []byte, soul *string) error {
	staging := filepath.Join(dir, stagingDir)
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	if err := os.Mkdir(staging, 0o755); err != nil {
		return err
	}
	if cfgData != nil {
		if err := s.step("stage:" + configFileName); err != nil {
			return err
		}
		if err := writeSynced(filepath.Join(staging, configFileName), cfgData); err != nil {
			return err
		}
	}
	if soul != nil {
		if err := s.step("stage:" + soulFileName); err != nil {
			return err
		}
		if err := writeSynced(filepath.Join(staging, soulFileName), []byte(*soul)); err != nil {
			return err
		}
	}
	return syncDir(staging)
}

// apply moves the files of .commit into the agent folder and removes it.
// Each rename is idempotent across a crash: a file already moved is no
// longer in .commit.
func (s *Store) apply(dir string) error {
	commit := filepath.Join(dir, commitDir)
	for _, f := range committedFiles {
		src := filepath.Join(commit, f)
		if _, err := os.Lstat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err := s.step("apply:" + f); err != nil {
			return err
		}
		if err := os.Rename(src, filepath.Join(dir, f)); err != nil {
			return fmt.Errorf("apply agent update: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if err := os.RemoveAll(commit); err != nil {
		return err
	}
	return syncDir(dir)
}

// recover finishes a committed update and discards an uncommitted one.
// The caller holds the agent's lock.
func (s *Store) recover(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, commitDir)); err == nil {
		s.logger.Info("finishing an interrupted custom agent update", "dir", filepath.Base(dir))
		if err := s.apply(dir); err != nil {
			return err
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, stagingDir)); err == nil {
		s.logger.Info("discarding an uncommitted custom agent update", "dir", filepath.Base(dir))
		if err := os.RemoveAll(filepath.Join(dir, stagingDir)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) step(name string) error {
	if s.testHook != nil {
		return s.testHook(name)
	}
	return nil
}

// writeSynced creates path with data and syncs it to disk.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes the renames in dir durable. Systems that cannot sync a
// directory report an error we ignore there.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
