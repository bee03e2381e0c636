package gateway

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/mcptools"
	"github.com/antlerhq/antler/model"
)

// This file maps an MCP elicitation request to DeerFlow's clarification
// card (the human_input_request its frontend renders, docs/api.md) and
// the frontend's answer back to the MCP result.

// ElicitationSource is the human_input source of an MCP server's
// question, so that clients tell it from ask_clarification and approval
// cards.
const ElicitationSource = "mcp_elicitation"

// Bounds of what a card shows, in characters.
const (
	maxElicitMessage = 2000
	maxElicitLabel   = 200
)

// The kinds of card.
const (
	cardForm    = "form"    // fields of a form-mode request's schema
	cardConfirm = "confirm" // a form-mode request without fields: accept, decline or cancel
	cardURL     = "url"     // a url-mode request: the address is shown, never opened
)

// The option values of a confirm or url card.
const (
	elicitAccept  = "accept"
	elicitDecline = "decline"
	elicitCancel  = "cancel"
)

// elicitCard is the card of one request and what reading its answer
// needs.
type elicitCard struct {
	kind   string
	msg    model.Message // the tool message shown
	fields []cardField   // of a form card
}

// cardField is one form field: its name on the card, and the schema's
// field it fills.
type cardField struct {
	name string
	f    mcptools.ElicitField
}

// reservedCardNames are names the frontend refuses for a form field
// (they would read an inherited JavaScript property).
var reservedCardNames = map[string]bool{"__proto__": true, "constructor": true, "prototype": true,
	"toString": true, "toLocaleString": true, "valueOf": true, "hasOwnProperty": true,
	"isPrototypeOf": true, "propertyIsEnumerable": true, "__defineGetter__": true,
	"__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true}

// newElicitCard builds the card of request p of server, made during the
// tool call toolCallID ("" when unknown). A form whose schema is not the
// flat object of primitives the MCP specification allows is an error.
func newElicitCard(id, server, toolCallID string, p *mcp.ElicitParams) (*elicitCard, error) {
	c := &elicitCard{kind: cardConfirm}
	question := clipRunes(strings.TrimSpace(p.Message), maxElicitMessage)
	if question == "" {
		question = "The MCP server asks for your input."
	}
	payload := map[string]any{
		"version": 1, "kind": "human_input_request", "source": ElicitationSource, "request_id": id,
		"clarification_type": "missing_info", "title": clipRunes("MCP server "+server, maxElicitLabel),
		"question": question, "input_mode": "single_choice",
	}
	if toolCallID != "" {
		payload["tool_call_id"] = toolCallID
	}
	var text strings.Builder
	fmt.Fprintf(&text, "🔌 The MCP server '%s' asks: %s\n\n", server, question)
	switch {
	case p.Mode == "url" || p.URL != "":
		c.kind = cardURL
		address := clipRunes(p.URL, maxElicitMessage)
		payload["context"] = "Open this address yourself if you trust it (Antler opens nothing): " + address +
			"\nChoose Done once you have finished there."
		payload["options"] = choiceOptions("Done", "Decline", "Cancel")
		fmt.Fprintf(&text, "Open this address yourself if you trust it (Antler opens nothing):\n%s\n\nAnswer %s (done), %s or %s.",
			address, elicitAccept, elicitDecline, elicitCancel)
	default:
		fields, err := mcptools.ElicitFields(p.RequestedSchema)
		if err != nil {
			return nil, fmt.Errorf("the form cannot be shown: %v", err)
		}
		if len(fields) == 0 {
			payload["options"] = choiceOptions("Accept", "Decline", "Cancel")
			fmt.Fprintf(&text, "Answer %s, %s or %s.", elicitAccept, elicitDecline, elicitCancel)
			break
		}
		c.kind = cardForm
		payload["version"], payload["input_mode"] = 2, "form"
		payload["context"] = fmt.Sprintf("Submitting the form sends these values to the MCP server '%s'. "+
			"To refuse, send the message %q (or %q) instead.", server, elicitDecline, elicitCancel)
		cardFields := make([]any, 0, len(fields))
		for i, f := range fields {
			cf, shown := formField(i, f)
			c.fields = append(c.fields, cf)
			cardFields = append(cardFields, shown)
			fmt.Fprintf(&text, "- %s\n", clipRunes(f.Label(), maxElicitLabel))
		}
		payload["fields"] = cardFields
		fmt.Fprintf(&text, "\nFill in the form, or answer %s or %s.", elicitDecline, elicitCancel)
	}
	c.msg = model.Message{ID: id, Role: model.RoleTool, Name: builtin.AskClarificationName, ToolCallID: toolCallID,
		Content: text.String(), Artifact: map[string]any{"human_input": payload}}
	return c, nil
}

// choiceOptions are the accept, decline and cancel options under the
// given labels.
func choiceOptions(accept, decline, cancel string) []any {
	return []any{
		map[string]any{"id": elicitAccept, "label": accept, "value": elicitAccept},
		map[string]any{"id": elicitDecline, "label": decline, "value": elicitDecline},
		map[string]any{"id": elicitCancel, "label": cancel, "value": elicitCancel},
	}
}

// formField is the card's field i for f: enums become select and
// multi_select with their options, booleans checkbox, numbers number, a
// date string date, other strings text. A field with a default, or a
// boolean, is not required on the card (the server's default fills an
// empty one; the frontend sends an unticked box as false);
// the placeholder shows the description and the default.
func formField(i int, f mcptools.ElicitField) (cardField, map[string]any) {
	name := f.Name
	if name == "" || reservedCardNames[name] || len(name) > maxElicitLabel {
		name = "field_" + strconv.Itoa(i+1)
	}
	typ := "text"
	switch f.Kind {
	case mcptools.ElicitEnum:
		typ = "select"
	case mcptools.ElicitMulti:
		typ = "multi_select"
	case mcptools.ElicitBoolean:
		typ = "checkbox"
	case mcptools.ElicitNumber, mcptools.ElicitInteger:
		typ = "number"
	case mcptools.ElicitString:
		if f.Format == "date" {
			typ = "date"
		}
	}
	// The frontend counts an unticked checkbox as unanswered: a required
	// boolean is never required on the card (its false is always sent).
	label := clipRunes(strings.TrimSpace(f.Label()), maxElicitLabel)
	if label == "" {
		label = name // the frontend refuses a card with an empty label
	}
	shown := map[string]any{"name": name, "label": label, "type": typ,
		"required": f.Required && f.Default == nil && f.Kind != mcptools.ElicitBoolean}
	var hint []string
	if f.Description != "" {
		hint = append(hint, f.Description)
	}
	if f.Default != nil {
		hint = append(hint, fmt.Sprintf("default: %v", f.Default))
	}
	if len(hint) > 0 {
		shown["placeholder"] = clipRunes(strings.Join(hint, "; "), maxElicitLabel)
	}
	if len(f.Options) > 0 {
		opts := make([]any, 0, len(f.Options))
		seen := map[string]bool{}
		for j, o := range f.Options {
			if o.Value == "" || seen[o.Value] {
				continue // the frontend refuses empty and repeated values
			}
			seen[o.Value] = true
			opts = append(opts, map[string]any{"id": "option-" + strconv.Itoa(j+1),
				"label": clipRunes(o.Label, maxElicitLabel), "value": o.Value})
		}
		shown["options"] = opts
		if len(opts) == 0 { // the frontend refuses a choice without options
			delete(shown, "options")
			shown["type"] = "text"
		}
	}
	return cardField{name: name, f: f}, shown
}

// result reads the frontend's answer to the card: the option chosen
// (kind "option") or the text sent (kind "text", which a plain message
// also is). "decline" and "cancel" (and a few synonyms) answer every
// card (a form field's own value is never read as one: the frontend
// sends a form's values inside its record); a form's answer is the record the frontend appends to the text
// ("... [values: {json}]"), each value checked against its field. An
// answer that fits nothing is an error saying what is expected.
func (c *elicitCard) result(kind, optionID, value string) (*mcp.ElicitResult, error) {
	word := strings.ToLower(strings.Trim(strings.TrimSpace(value), ".!"))
	if kind == "option" && optionID != "" {
		word = optionID
	}
	switch word {
	case elicitDecline, "declined", "reject":
		return &mcp.ElicitResult{Action: elicitDecline}, nil
	case elicitCancel, "cancelled", "canceled":
		return &mcp.ElicitResult{Action: elicitCancel}, nil
	}
	switch c.kind {
	case cardURL, cardConfirm:
		switch word {
		case elicitAccept, "accepted", "done", "yes", "y", "ok":
			if c.kind == cardConfirm {
				return &mcp.ElicitResult{Action: elicitAccept, Content: map[string]any{}}, nil
			}
			return &mcp.ElicitResult{Action: elicitAccept}, nil
		}
		return nil, fmt.Errorf("answer %s, %s or %s", elicitAccept, elicitDecline, elicitCancel)
	}
	content, err := c.formContent(value)
	if err != nil {
		return nil, err
	}
	return &mcp.ElicitResult{Action: elicitAccept, Content: content}, nil
}

// formContent reads a form's values: the record after "[values: " that
// the frontend appends to a submitted form's text, or, for a form of one
// field, the whole text as that field's answer.
func (c *elicitCard) formContent(value string) (map[string]any, error) {
	raw := map[string]any{}
	const marker = "[values: "
	i := strings.LastIndex(value, marker)
	rest := strings.TrimSpace(value)
	switch {
	case i >= 0 && strings.HasSuffix(rest, "]"):
		record := strings.TrimSuffix(strings.TrimSpace(value[i+len(marker):]), "]")
		if err := json.Unmarshal([]byte(record), &raw); err != nil {
			return nil, fmt.Errorf("the form's values are not a JSON object: %v", err)
		}
	case len(c.fields) == 1 && rest != "":
		raw[c.fields[0].name] = rest
	default:
		return nil, fmt.Errorf("fill in the form")
	}
	content := map[string]any{}
	for _, cf := range c.fields {
		v, ok := raw[cf.name]
		if !ok || v == nil || v == "" {
			if cf.f.Required && cf.f.Default == nil {
				return nil, fmt.Errorf("%q is required", cf.f.Label())
			}
			continue
		}
		got, err := fieldValue(cf.f, v)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", cf.f.Label(), err)
		}
		content[cf.f.Name] = got
	}
	return content, nil
}

// fieldValue checks one form value (a string, a boolean, a number or a
// list of strings, as the frontend sends them) against its field.
func fieldValue(f mcptools.ElicitField, v any) (any, error) {
	switch x := v.(type) {
	case string:
		return f.Parse(x)
	case bool:
		if f.Kind != mcptools.ElicitBoolean {
			return nil, fmt.Errorf("a yes or no answer where %s is expected", f.Kind)
		}
		return x, nil
	case float64:
		return f.Parse(strconv.FormatFloat(x, 'f', -1, 64))
	case []any:
		if f.Kind != mcptools.ElicitMulti {
			return nil, fmt.Errorf("a list where one value is expected")
		}
		one := mcptools.ElicitField{Name: f.Name, Kind: mcptools.ElicitEnum, Options: f.Options}
		out := make([]any, 0, len(x))
		for _, item := range x {
			s, ok := item.(string)
			if !ok {
				return nil, fmt.Errorf("choice %v is not a string", item)
			}
			o, err := one.Parse(s)
			if err != nil {
				return nil, err
			}
			out = append(out, o)
		}
		if f.Min != nil && float64(len(out)) < *f.Min {
			return nil, fmt.Errorf("at least %g choices", *f.Min)
		}
		if f.Max != nil && float64(len(out)) > *f.Max {
			return nil, fmt.Errorf("at most %g choices", *f.Max)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected value %v", v)
}

// clipRunes cuts s to n characters, marking the cut.
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// urlHost is the host of an address, for logs ("?" when unreadable).
func urlHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return "?"
}
