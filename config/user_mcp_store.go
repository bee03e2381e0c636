package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// MaxUserMCPFileSize bounds a user MCP file: a larger one is refused on
// read and never written.
const MaxUserMCPFileSize = 1 << 20

// UserMCPFiles reads and writes the users' MCP files. Load re-reads the
// file on every call (it is small) and returns the same *UserMCP while
// the bytes are unchanged; Edit is a read-modify-write serialised within
// the process. Files are written atomically with mode 0600 (they hold
// secrets) in folders created 0700. It is safe for concurrent use.
type UserMCPFiles struct {
	// Dir returns the folder of a user's file (vpath.Layout.UserDir);
	// its error refuses the user id. Required.
	Dir func(user string) (string, error)

	mu    sync.Mutex
	cache map[string]userMCPEntry // guarded by mu; by user
}

type userMCPEntry struct {
	data []byte
	u    *UserMCP
}

// Path returns the path of user's file.
func (f *UserMCPFiles) Path(user string) (string, error) {
	dir, err := f.Dir(user)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, UserMCPFileName), nil
}

// read returns the file's bytes, nil when there is none.
func readUserMCP(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + errMsg(err), Err: err}
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxUserMCPFileSize+1))
	if err != nil {
		return nil, &Error{File: path, Msg: "cannot read: " + errMsg(err), Err: err}
	}
	if len(data) > MaxUserMCPFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("larger than %d bytes", MaxUserMCPFileSize)}
	}
	return data, nil
}

// Load returns user's MCP file, an empty one when there is none. A file
// that does not parse is an error naming file, line and key.
func (f *UserMCPFiles) Load(user string) (*UserMCP, error) {
	path, err := f.Path(user)
	if err != nil {
		return nil, err
	}
	data, err := readUserMCP(path)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if e, ok := f.cache[user]; ok && bytes.Equal(e.data, data) {
		return e.u, nil
	}
	u, err := ParseUserMCP(path, data)
	if err != nil {
		return nil, err
	}
	if f.cache == nil {
		f.cache = map[string]userMCPEntry{}
	}
	f.cache[user] = userMCPEntry{data: data, u: u}
	return u, nil
}

// Doc returns user's file as Edit would hand it to its function (raw
// server entries, credentials); an empty one when there is none.
func (f *UserMCPFiles) Doc(user string) (*UserMCPDoc, error) {
	path, err := f.Path(user)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return readDoc(path)
}

// readDoc reads and checks the file at path as a UserMCPDoc.
func readDoc(path string) (*UserMCPDoc, error) {
	data, err := readUserMCP(path)
	if err != nil {
		return nil, err
	}
	if _, err := ParseUserMCP(path, data); err != nil {
		return nil, err
	}
	doc := &UserMCPDoc{MCPServers: map[string]json.RawMessage{}, Credentials: map[string]Credential{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return doc, nil
	}
	var raw struct {
		MCPServers  map[string]json.RawMessage `json:"mcpServers"`
		Credentials map[string]Credential      `json:"credentials"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, jsonError(path, data, "", err)
	}
	if raw.MCPServers != nil {
		doc.MCPServers = raw.MCPServers
	}
	if raw.Credentials != nil {
		doc.Credentials = raw.Credentials
	}
	return doc, nil
}

// UserMCPDoc is a user MCP file as Edit changes it: the raw server
// entries (as the extensions file holds them) and the credentials.
type UserMCPDoc struct {
	MCPServers  map[string]json.RawMessage
	Credentials map[string]Credential
}

// Edit reads user's file, lets fn change it, and writes it back
// atomically (0600) when fn returns nil, provided the result parses as
// ParseUserMCP reads it; it returns the parsed result. Edits within this
// process are serialised; another process editing the same file at the
// same moment may lose its change (the last rename wins).
func (f *UserMCPFiles) Edit(user string, fn func(*UserMCPDoc) error) (*UserMCP, error) {
	path, err := f.Path(user)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	doc, err := readDoc(path)
	if err != nil {
		return nil, err
	}
	if err := fn(doc); err != nil {
		return nil, err
	}
	out, err := json.MarshalIndent(map[string]any{"mcpServers": doc.MCPServers, "credentials": doc.Credentials}, "", "  ")
	if err != nil {
		return nil, err
	}
	out = append(out, '\n')
	if len(out) > MaxUserMCPFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file would be larger than %d bytes", MaxUserMCPFileSize)}
	}
	u, err := ParseUserMCP(path, out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if err := WriteFileAtomic(path, out, 0o600); err != nil {
		return nil, err
	}
	// WriteFileAtomic keeps the mode of an existing file; this one holds
	// secrets whatever it was before.
	if err := os.Chmod(path, 0o600); err != nil {
		return nil, err
	}
	if f.cache == nil {
		f.cache = map[string]userMCPEntry{}
	}
	f.cache[user] = userMCPEntry{data: out, u: u}
	return u, nil
}
