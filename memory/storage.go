package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/antlerhq/antler/vpath"
)

// Storage keeps one memory document per user. Load returns an empty
// document for a user without one. Save replaces the document whole: a
// reader sees the old document or the new one, never a mix. The Manager
// serialises the writes of one process; implementations need not.
type Storage interface {
	Load(ctx context.Context, userID string) (*Document, error)
	Save(ctx context.Context, userID string, doc *Document) error
}

// FileStorage keeps each user's document at
// {Root}/users/{user}/{Filename}, DeerFlow's layout.
type FileStorage struct {
	// Root is the data root (the Antler home by default). Required.
	Root string
	// Filename is the document's file name; "" means memory.json.
	Filename string

	// beforeRename, when set (tests), runs between the temporary file's
	// write and its rename; an error abandons the write there, as a crash
	// would.
	beforeRename func(tmp string) error
}

// Path returns the file of a user's document.
func (s *FileStorage) Path(userID string) (string, error) {
	if !vpath.ValidID(userID) {
		return "", fmt.Errorf("memory: %q is not a valid user id", userID)
	}
	name := s.Filename
	if name == "" {
		name = "memory.json"
	}
	return filepath.Join(s.Root, "users", userID, name), nil
}

// Load implements Storage.
func (s *FileStorage) Load(_ context.Context, userID string) (*Document, error) {
	p, err := s.Path(userID)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return NewDocument(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("memory: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("memory: read %s: %w", p, err)
	}
	return decodeDocument(data, p)
}

// decodeDocument parses a stored document; where names it in errors.
func decodeDocument(data []byte, where string) (*Document, error) {
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("memory: %s is larger than %d bytes", where, MaxDocumentBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return NewDocument(), nil
	}
	doc := NewDocument()
	if err := json.Unmarshal(data, doc); err != nil {
		return nil, fmt.Errorf("memory: %s is not a memory document: %w", where, err)
	}
	if doc.Facts == nil {
		doc.Facts = []Fact{}
	}
	return doc, nil
}

// encodeDocument renders doc as stored, bounded by MaxDocumentBytes.
func encodeDocument(doc *Document) ([]byte, error) {
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocumentBytes {
		return nil, fmt.Errorf("%w: the document would be %d bytes (at most %d)", ErrInvalid, len(data), MaxDocumentBytes)
	}
	return append(data, '\n'), nil
}

// Save implements Storage: temporary file in the same folder, sync,
// rename, sync of the folder.
func (s *FileStorage) Save(_ context.Context, userID string, doc *Document) error {
	p, err := s.Path(userID)
	if err != nil {
		return err
	}
	data, err := encodeDocument(doc)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("memory: write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("memory: sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if s.beforeRename != nil {
		if err := s.beforeRename(tmp.Name()); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	done = true
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	sweepTemps(dir, filepath.Base(p))
	return nil
}

// staleTempAge is the age past which a temporary file of a document is
// taken for the remains of a killed write: a live write of another
// process (the CLI beside a server) lasts well under it.
const staleTempAge = time.Minute

// sweepTemps removes the temporary files of killed writes of name in
// dir, so that crashes leave no files behind over time. Errors are
// ignored: a file left is removed by a later write.
func sweepTemps(dir, name string) {
	tmps, _ := filepath.Glob(filepath.Join(dir, "."+name+".tmp-*"))
	for _, t := range tmps {
		if fi, err := os.Stat(t); err == nil && time.Since(fi.ModTime()) > staleTempAge {
			_ = os.Remove(t)
		}
	}
}
