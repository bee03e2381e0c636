package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/tool"
)

// This file is what a client of elicitation/create needs to ask a human:
// which server asked (ElicitationServer), and the fields of a form-mode
// request's schema with their parsing (ElicitFields, ElicitField.Parse).
// The MCP specification restricts the schema to a flat object of
// primitive properties: strings (with format email, uri, date or
// date-time), numbers, integers, booleans, single-choice enums and
// multi-choice arrays of enums.

// MaxElicitFields bounds the fields of one form-mode request:
// ElicitFields refuses a schema with more properties.
const MaxElicitFields = 32

// MaxElicitOptions bounds the options of one enum field.
const MaxElicitOptions = 100

type elicitServerKey struct{}

// ElicitationServer is the name of the server whose elicitation/create
// request the handler's ctx belongs to ("" when ctx is no such context).
func ElicitationServer(ctx context.Context) string {
	s, _ := ctx.Value(elicitServerKey{}).(string)
	return s
}

type elicitCallKey struct{}

// ElicitationCall is the tool call that the elicitation/create request
// of the handler's ctx belongs to, or nil when no call, or calls of
// more than one run, are in flight on the asking session (the MCP
// protocol does not say which request an elicitation serves, so a
// session shared by several runs' calls cannot be attributed). When
// several calls of one run are in flight the returned call is a copy
// with no ID. The handler's ctx is cancelled once the call ends (its
// run cancelled, its timeout reached).
func ElicitationCall(ctx context.Context) *tool.Call {
	c, _ := ctx.Value(elicitCallKey{}).(*tool.Call)
	return c
}

// elicitationHandler wraps the Options' handler for the server called
// name: its ctx tells the server (ElicitationServer) and, when one run's
// calls are in flight on the session, the call (ElicitationCall). nil
// stays nil, so that the capability is advertised only when a handler is
// set.
func (m *Manager) elicitationHandler(name string) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	h := m.opts.ElicitationHandler
	if h == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		ctx = context.WithValue(ctx, elicitServerKey{}, name)
		call, done := m.asking.attribute(req.Session)
		if call == nil {
			return h(ctx, req)
		}
		ctx, cancel := context.WithCancel(context.WithValue(ctx, elicitCallKey{}, call))
		defer cancel()
		answered := make(chan struct{})
		defer close(answered)
		go func() { // cancel once every call of the run has ended
			for _, d := range done {
				select {
				case <-d:
				case <-answered:
					return
				}
			}
			cancel()
		}()
		return h(ctx, req)
	}
}

// callRegistry holds the tool calls in flight by session, so that an
// elicitation a session receives can be attributed to its call.
type callRegistry struct {
	mu    sync.Mutex
	calls map[*mcp.ClientSession][]inFlight // guarded by mu
	next  uint64                            // guarded by mu
}

type inFlight struct {
	id   uint64
	call *tool.Call
	done <-chan struct{}
}

// add records call in flight on cs until the returned remove; done is
// closed when the call ends.
func (r *callRegistry) add(cs *mcp.ClientSession, call *tool.Call, done <-chan struct{}) (remove func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls == nil {
		r.calls = map[*mcp.ClientSession][]inFlight{}
	}
	r.next++
	id := r.next
	r.calls[cs] = append(r.calls[cs], inFlight{id: id, call: call, done: done})
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		left := slices.DeleteFunc(r.calls[cs], func(f inFlight) bool { return f.id == id })
		if len(left) == 0 {
			delete(r.calls, cs)
			return
		}
		r.calls[cs] = left
	}
}

// attribute returns the call in flight on cs and the done channels of
// the calls, when every call in flight there belongs to one run (see
// ElicitationCall); nil otherwise.
func (r *callRegistry) attribute(cs *mcp.ClientSession) (*tool.Call, []<-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fs := r.calls[cs]
	if len(fs) == 0 || cs == nil {
		return nil, nil
	}
	first := fs[0].call
	done := make([]<-chan struct{}, 0, len(fs))
	for _, f := range fs {
		c := f.call
		if c.RunID != first.RunID || c.ThreadID != first.ThreadID || c.UserID != first.UserID {
			return nil, nil
		}
		done = append(done, f.done)
	}
	if len(fs) > 1 {
		cp := *first
		cp.ID = ""
		return &cp, done
	}
	return first, done
}

// elicitationCapabilities are the client capabilities with a handler:
// form and url mode (a url-mode request is shown to the human, never
// opened by Antler).
func elicitationCapabilities(handler bool) *mcp.ClientCapabilities {
	if !handler {
		return &mcp.ClientCapabilities{}
	}
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{
		Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
}

// The kinds of an ElicitField.
const (
	ElicitString  = "string"
	ElicitNumber  = "number"
	ElicitInteger = "integer"
	ElicitBoolean = "boolean"
	ElicitEnum    = "enum"  // one of Options
	ElicitMulti   = "multi" // any of Options (an array)
)

// ElicitOption is one choice of an enum field: the value sent and the
// label shown (the value when the schema gives none).
type ElicitOption struct {
	Value, Label string
}

// ElicitField is one property of a form-mode request's schema.
type ElicitField struct {
	Name        string
	Title       string // "" when the schema gives none
	Description string
	Kind        string // one of the Elicit* kinds
	Format      string // of a string: email, uri, date, date-time or ""
	Required    bool
	// Default is the schema's default, or nil.
	Default any
	// Options of an enum or multi field.
	Options []ElicitOption
	// Min and Max bound a number's value, a string's length in
	// characters, or the count of a multi field's choices; nil is
	// unbounded.
	Min, Max *float64
}

// Label is the field's title, else its name.
func (f ElicitField) Label() string { return cmp.Or(f.Title, f.Name) }

// elicitSchema is the part of a requested schema the fields read.
type elicitSchema struct {
	Type        string                  `json:"type"`
	Properties  map[string]elicitSchema `json:"properties"`
	Required    []string                `json:"required"`
	Title       string                  `json:"title"`
	Description string                  `json:"description"`
	Format      string                  `json:"format"`
	Default     any                     `json:"default"`
	Enum        []any                   `json:"enum"`
	EnumNames   []string                `json:"enumNames"`
	OneOf       []elicitConst           `json:"oneOf"`
	AnyOf       []elicitConst           `json:"anyOf"`
	Items       *elicitSchema           `json:"items"`
	Minimum     *float64                `json:"minimum"`
	Maximum     *float64                `json:"maximum"`
	MinLength   *float64                `json:"minLength"`
	MaxLength   *float64                `json:"maxLength"`
	MinItems    *float64                `json:"minItems"`
	MaxItems    *float64                `json:"maxItems"`
}

type elicitConst struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// ElicitFields returns the fields of a form-mode request's schema: the
// required properties in the order the schema lists them, then the
// others by name. A schema that is no flat object of the specification's
// primitives, or has more than MaxElicitFields properties, is an error
// naming the property.
func ElicitFields(schema any) ([]ElicitField, error) {
	if schema == nil {
		return nil, nil
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("requestedSchema: %v", err)
	}
	var s elicitSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("requestedSchema: %v", err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("requestedSchema: type %q, want object", s.Type)
	}
	if len(s.Properties) > MaxElicitFields {
		return nil, fmt.Errorf("requestedSchema: %d properties, at most %d are asked", len(s.Properties), MaxElicitFields)
	}
	names := make([]string, 0, len(s.Properties))
	for _, r := range s.Required {
		if _, ok := s.Properties[r]; ok && !slices.Contains(names, r) {
			names = append(names, r)
		}
	}
	rest := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		if !slices.Contains(names, n) {
			rest = append(rest, n)
		}
	}
	slices.Sort(rest)
	fields := make([]ElicitField, 0, len(s.Properties))
	for _, n := range append(names, rest...) {
		f, err := elicitField(n, s.Properties[n], slices.Contains(s.Required, n))
		if err != nil {
			return nil, fmt.Errorf("requestedSchema: property %q: %v", n, err)
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func elicitField(name string, p elicitSchema, required bool) (ElicitField, error) {
	f := ElicitField{Name: name, Title: p.Title, Description: p.Description, Required: required, Default: p.Default}
	var err error
	switch {
	case p.Type == "array":
		f.Kind, f.Min, f.Max = ElicitMulti, p.MinItems, p.MaxItems
		if p.Items == nil {
			return f, fmt.Errorf("an array without items")
		}
		f.Options, err = elicitOptions(*p.Items)
		if err == nil && len(f.Options) == 0 {
			err = fmt.Errorf("an array whose items have no enum")
		}
	case len(p.Enum) > 0 || len(p.OneOf) > 0 || len(p.AnyOf) > 0:
		f.Kind = ElicitEnum
		f.Options, err = elicitOptions(p)
	case p.Type == "string":
		f.Kind, f.Format, f.Min, f.Max = ElicitString, p.Format, p.MinLength, p.MaxLength
	case p.Type == "number" || p.Type == "integer":
		f.Kind, f.Min, f.Max = p.Type, p.Minimum, p.Maximum
	case p.Type == "boolean":
		f.Kind = ElicitBoolean
	default:
		err = fmt.Errorf("type %q is not one of string, number, integer, boolean or an enum array", p.Type)
	}
	return f, err
}

// elicitOptions are the choices of an enum schema: enum (labelled by
// enumNames, the legacy form), else oneOf or anyOf of const and title.
func elicitOptions(p elicitSchema) ([]ElicitOption, error) {
	var out []ElicitOption
	for i, v := range p.Enum {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("enum value %v is not a string", v)
		}
		label := s
		if i < len(p.EnumNames) && p.EnumNames[i] != "" {
			label = p.EnumNames[i]
		}
		out = append(out, ElicitOption{Value: s, Label: label})
	}
	for _, c := range append(p.OneOf, p.AnyOf...) {
		s, ok := c.Const.(string)
		if !ok {
			return nil, fmt.Errorf("const %v is not a string", c.Const)
		}
		out = append(out, ElicitOption{Value: s, Label: cmp.Or(c.Title, s)})
	}
	if len(out) > MaxElicitOptions {
		return nil, fmt.Errorf("%d options, at most %d are shown", len(out), MaxElicitOptions)
	}
	return out, nil
}

// Parse turns what the human typed for f into the value sent: a number
// for number and integer fields, true or false for booleans (yes/no,
// y/n, true/false, 1/0), an option's value for an enum (its value, its
// label or its 1-based number), a list of them separated by commas for a
// multi field, else the text. A value outside the field's bounds,
// format or options is an error saying what is expected.
func (f ElicitField) Parse(text string) (any, error) {
	text = strings.TrimSpace(text)
	switch f.Kind {
	case ElicitBoolean:
		switch strings.ToLower(text) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, fmt.Errorf("answer yes or no")
	case ElicitNumber, ElicitInteger:
		return f.parseNumber(text)
	case ElicitEnum:
		o, err := f.option(text)
		if err != nil {
			return nil, err
		}
		return o, nil
	case ElicitMulti:
		var vals []any
		for part := range strings.SplitSeq(text, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			o, err := f.option(part)
			if err != nil {
				return nil, err
			}
			vals = append(vals, o)
		}
		if err := f.bound(float64(len(vals)), "choices"); err != nil {
			return nil, err
		}
		return vals, nil
	}
	if err := f.bound(float64(len([]rune(text))), "characters"); err != nil {
		return nil, err
	}
	return text, checkFormat(f.Format, text)
}

func (f ElicitField) parseNumber(text string) (any, error) {
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return nil, fmt.Errorf("answer a number")
	}
	if f.Kind == ElicitInteger && v != math.Trunc(v) {
		return nil, fmt.Errorf("answer a whole number")
	}
	if err := f.bound(v, ""); err != nil {
		return nil, err
	}
	if f.Kind == ElicitInteger {
		return int64(v), nil
	}
	return v, nil
}

// bound checks v against Min and Max; unit names what v counts.
func (f ElicitField) bound(v float64, unit string) error {
	if unit != "" {
		unit = " " + unit
	}
	if f.Min != nil && v < *f.Min {
		return fmt.Errorf("at least %s%s", strconv.FormatFloat(*f.Min, 'f', -1, 64), unit)
	}
	if f.Max != nil && v > *f.Max {
		return fmt.Errorf("at most %s%s", strconv.FormatFloat(*f.Max, 'f', -1, 64), unit)
	}
	return nil
}

// option is the value of the option text names: by value, label or
// 1-based number.
func (f ElicitField) option(text string) (string, error) {
	for _, o := range f.Options {
		if strings.EqualFold(text, o.Value) || strings.EqualFold(text, o.Label) {
			return o.Value, nil
		}
	}
	if n, err := strconv.Atoi(text); err == nil && n >= 1 && n <= len(f.Options) {
		return f.Options[n-1].Value, nil
	}
	return "", fmt.Errorf("answer one of the options (its number, value or label)")
}

// checkFormat checks a string's format as the specification names them.
func checkFormat(format, s string) error {
	var err error
	switch format {
	case "email":
		_, err = mail.ParseAddress(s)
	case "uri":
		var u *url.URL
		if u, err = url.Parse(s); err == nil && u.Scheme == "" {
			err = fmt.Errorf("no scheme")
		}
	case "date":
		_, err = time.Parse(time.DateOnly, s)
	case "date-time":
		_, err = time.Parse(time.RFC3339, s)
	}
	if err != nil {
		return fmt.Errorf("answer a valid %s", format)
	}
	return nil
}
