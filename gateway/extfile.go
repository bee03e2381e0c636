package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/antlerhq/antler/config"
)

// errNoExtensions: the gateway has no extensions file to write.
var errNoExtensions = errors.New("no extensions_config.json is configured (pass --extensions)")

// readExtensions reads the extensions file as raw JSON, top-level keys
// kept (a missing or empty file is an empty object). Values are as
// written: $VAR references stay unresolved, so they can be written back.
// The caller holds extMu for a read-modify-write.
func (s *Server) readExtensions() (map[string]json.RawMessage, error) {
	top := map[string]json.RawMessage{}
	if s.opts.ExtensionsPath == "" {
		return top, nil
	}
	data, err := os.ReadFile(s.opts.ExtensionsPath)
	if errors.Is(err, fs.ErrNotExist) {
		return top, nil
	}
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return top, nil
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s is not valid JSON: %w", s.opts.ExtensionsPath, err)
	}
	return top, nil
}

// writeExtensions validates and atomically replaces the extensions file.
// The caller holds extMu.
func (s *Server) writeExtensions(top map[string]json.RawMessage) error {
	if s.opts.ExtensionsPath == "" {
		return errNoExtensions
	}
	data, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return err
	}
	return config.SaveExtensions(s.opts.ExtensionsPath, append(data, '\n'))
}

// rawObject decodes top[key] as an object of raw values (empty when
// absent or null).
func rawObject(top map[string]json.RawMessage, key string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	raw, ok := top[key]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%s must be an object", key)
	}
	return out, nil
}
