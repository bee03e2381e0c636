package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/tailscale/hujson"

	"github.com/antlerhq/antler/config"
)

// extFile is an extensions_config.json being edited by `antler mcp add`,
// `remove`, `enable` and `disable`. The file is held as a hujson syntax
// tree, which keeps every byte an edit does not touch: other keys (also
// keys Antler does not know), their order, the indentation and line
// breaks. Only the edited member of mcpServers is written anew, indented
// like its siblings (docs/design.md, "antler mcp edits the extensions file
// in place").
type extFile struct {
	path string
	root hujson.Value
	// unit is the file's indentation step, "" for a file on one line.
	unit string
}

// defaultIndentUnit indents a new file and a file with no nested object
// to learn from.
const defaultIndentUnit = "  "

// readExtFile parses the extensions file at path; a missing or empty file
// is an empty object. A file that is not standard JSON is refused with its
// line, as Antler's loader would refuse it.
func readExtFile(path string) (*extFile, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &config.Error{File: path, Msg: "cannot read: " + err.Error(), Err: err}
	}
	if len(bytes.TrimSpace(data)) == 0 {
		data = []byte("{}\n")
	}
	if !json.Valid(data) {
		if _, perr := config.ParseExtensions(path, data, nil); perr != nil {
			return nil, perr
		}
		return nil, &config.Error{File: path, Msg: "invalid JSON"}
	}
	v, err := hujson.Parse(data)
	if err != nil {
		return nil, &config.Error{File: path, Msg: "invalid JSON: " + err.Error(), Err: err}
	}
	if _, ok := v.Value.(*hujson.Object); !ok {
		return nil, &config.Error{File: path, Msg: "the top level must be a JSON object"}
	}
	f := &extFile{path: path, root: v, unit: defaultIndentUnit}
	if obj := f.rootObject(); len(obj.Members) > 0 {
		f.unit, _ = lineIndent(obj.Members[0].Name.BeforeExtra)
	}
	return f, nil
}

func (f *extFile) rootObject() *hujson.Object { return f.root.Value.(*hujson.Object) }

// bytes is the edited file; it is always standard JSON.
func (f *extFile) bytes() []byte { return f.root.Pack() }

// save writes the file atomically: a temporary file in the same folder,
// renamed over it, the mode of an existing file kept (0644 for a new
// one), a symlink's target replaced.
func (f *extFile) save() error {
	out := f.bytes()
	if !json.Valid(out) {
		return fmt.Errorf("%s: internal error: the edit produced invalid JSON; the file was not changed", f.path)
	}
	return config.WriteFileAtomic(f.path, out, 0o644)
}

// lineIndent returns the indentation of the line an Extra ends on and
// whether the Extra contains a line break at all.
func lineIndent(extra hujson.Extra) (string, bool) {
	i := bytes.LastIndexByte(extra, '\n')
	if i < 0 {
		return "", false
	}
	return string(extra[i+1:]), true
}

// memberName is the key of m.
func memberName(m hujson.ObjectMember) string {
	lit, _ := m.Name.Value.(hujson.Literal)
	return lit.String()
}

// member returns the index of key name in obj, or -1.
func member(obj *hujson.Object, name string) int {
	for i, m := range obj.Members {
		if memberName(m) == name {
			return i
		}
	}
	return -1
}

// servers returns the mcpServers object, creating it (at the end of the
// file) when create is set; nil when absent or null and create is not set.
func (f *extFile) servers(create bool) (*hujson.Object, error) {
	root := f.rootObject()
	i := member(root, "mcpServers")
	if i >= 0 {
		switch v := root.Members[i].Value.Value.(type) {
		case *hujson.Object:
			return v, nil
		case hujson.Literal:
			if v.Kind() == 'n' {
				if !create {
					return nil, nil
				}
				obj := &hujson.Object{}
				root.Members[i].Value.Value = obj
				return obj, nil
			}
		}
		return nil, &config.Error{File: f.path, Key: "mcpServers", Msg: "must be an object"}
	}
	if !create {
		return nil, nil
	}
	obj := &hujson.Object{}
	f.insert(root, "", len(root.Members), "mcpServers", hujson.Value{Value: obj})
	return obj, nil
}

// insert puts member name with value v at index idx of obj, whose own
// line is indented by indent, spaced like obj's other members (or, in
// an empty object, one unit deeper than obj, its closing brace on a line
// of its own).
func (f *extFile) insert(obj *hujson.Object, indent string, idx int, name string, v hujson.Value) {
	var before, afterColon hujson.Extra
	switch {
	case len(obj.Members) > 0:
		sib := obj.Members[min(idx, len(obj.Members)-1)]
		if ind, multiline := lineIndent(sib.Name.BeforeExtra); multiline {
			before = hujson.Extra("\n" + ind)
		} else {
			before = append(hujson.Extra(nil), sib.Name.BeforeExtra...)
		}
		afterColon = append(hujson.Extra(nil), sib.Value.BeforeExtra...)
	case f.unit != "":
		before = hujson.Extra("\n" + indent + f.unit)
		obj.AfterExtra = hujson.Extra("\n" + indent)
		afterColon = hujson.Extra(" ")
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: before, Value: hujson.String(name)},
		Value: hujson.Value{BeforeExtra: afterColon, Value: v.Value},
	}
	obj.Members = append(obj.Members, hujson.ObjectMember{})
	copy(obj.Members[idx+1:], obj.Members[idx:])
	obj.Members[idx] = m
}

// serverIndent is the indentation of the lines of mcpServers' members
// (the lines their values continue on).
func (f *extFile) serverIndent(obj *hujson.Object) string {
	if len(obj.Members) > 0 {
		if ind, ok := lineIndent(obj.Members[0].Name.BeforeExtra); ok {
			return ind
		}
		return ""
	}
	return f.unit + f.unit
}

// encodeValue returns v as JSON indented for a value that starts on a
// line indented by indent (compact when the file is on one line), with
// <, > and & kept as they are.
func (f *extFile) encodeValue(v any, indent string) (hujson.Value, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if f.unit != "" {
		enc.SetIndent(indent, f.unit)
	}
	if err := enc.Encode(v); err != nil {
		return hujson.Value{}, err
	}
	hv, err := hujson.Parse(bytes.TrimRight(buf.Bytes(), "\n"))
	if err != nil {
		return hujson.Value{}, err
	}
	hv.BeforeExtra, hv.AfterExtra = nil, nil
	return hv, nil
}

// serverLine returns the line of server name's key, for messages.
func (f *extFile) serverLine(name string) int {
	obj, _ := f.servers(false)
	if obj == nil {
		return 0
	}
	i := member(obj, name)
	if i < 0 {
		return 0
	}
	f.root.UpdateOffsets()
	return 1 + bytes.Count(f.bytes()[:obj.Members[i].Name.StartOffset], []byte("\n"))
}

// addServer adds server name with the JSON value entry at the end of
// mcpServers; a server of that name is an error.
func (f *extFile) addServer(name string, entry any) error {
	obj, err := f.servers(true)
	if err != nil {
		return err
	}
	if member(obj, name) >= 0 {
		return usageErrorf("%s:%d: mcpServers already has a server %q: remove it first (antler mcp remove %s)", f.path, f.serverLine(name), name, name)
	}
	hv, err := f.encodeValue(entry, f.serverIndent(obj))
	if err != nil {
		return err
	}
	f.insert(obj, f.unit, len(obj.Members), name, hv)
	return nil
}

// serverObject returns the object of server name.
func (f *extFile) serverObject(name string) (*hujson.Object, error) {
	obj, err := f.servers(false)
	if err != nil {
		return nil, err
	}
	i := -1
	if obj != nil {
		i = member(obj, name)
	}
	if i < 0 {
		return nil, f.noServer(obj, name)
	}
	s, ok := obj.Members[i].Value.Value.(*hujson.Object)
	if !ok {
		return nil, &config.Error{File: f.path, Line: f.serverLine(name), Key: "mcpServers." + name, Msg: "must be an object"}
	}
	return s, nil
}

// noServer is the error for a server name mcpServers does not have, with
// the nearest name there is.
func (f *extFile) noServer(obj *hujson.Object, name string) error {
	var names []string
	if obj != nil {
		for _, m := range obj.Members {
			names = append(names, memberName(m))
		}
	}
	return noServerError(f.path, name, names)
}

func noServerError(path, name string, names []string) error {
	msg := fmt.Sprintf("%s: mcpServers has no server %q", path, name)
	if near, ok := config.NearestKey(name, names); ok {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	if len(names) == 0 {
		return usageErrorf("%s: it has none (add one with antler mcp add)", msg)
	}
	return usageErrorf("%s; it has: %s", msg, strings.Join(names, ", "))
}

// removeServer deletes server name from mcpServers.
func (f *extFile) removeServer(name string) error {
	obj, err := f.servers(false)
	if err != nil {
		return err
	}
	i := -1
	if obj != nil {
		i = member(obj, name)
	}
	if i < 0 {
		return f.noServer(obj, name)
	}
	if i == 0 && len(obj.Members) > 1 {
		// The next member takes the removed one's place and spacing.
		obj.Members[1].Name.BeforeExtra = obj.Members[0].Name.BeforeExtra
	}
	obj.Members = append(obj.Members[:i], obj.Members[i+1:]...)
	if n := len(obj.Members); n > 0 {
		obj.Members[n-1].Value.AfterExtra = nil // no trailing comma
	} else {
		obj.AfterExtra = nil // "{}"
	}
	return nil
}

// setEnabled sets server name's "enabled" key, adding it as the server's
// first key when the server has none. It reports whether the value
// changed.
func (f *extFile) setEnabled(name string, on bool) (bool, error) {
	s, err := f.serverObject(name)
	if err != nil {
		return false, err
	}
	if i := member(s, "enabled"); i >= 0 {
		old, isLit := s.Members[i].Value.Value.(hujson.Literal)
		changed := !isLit || old.Kind() != hujson.Bool(on).Kind()
		s.Members[i].Value.Value = hujson.Bool(on)
		return changed, nil
	}
	servers, _ := f.servers(false)
	f.insert(s, f.serverIndent(servers), 0, "enabled", hujson.Value{Value: hujson.Bool(on)})
	// Absent means enabled (DeerFlow's default).
	return !on, nil
}
