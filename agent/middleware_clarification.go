package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/builtin"
	"github.com/antlerhq/antler/tool"
)

// Limits of a clarification form (DeerFlow's clarification_tool.py). Exceeding one drops the
// whole form; the question falls back to options or free text.
const (
	maxFormFields           = 16
	maxFieldOptions         = 24
	maxFieldTextChars       = 200
	maxFormSerializedBytes  = 16_384
	clarificationDisabledID = "proceed-without-clarification"
)

// ClarificationDisabledText is the tool result when the run context sets
// disable_clarification (webhook channels): the human is not there to
// answer, so the agent must go on.
const ClarificationDisabledText = "Clarification is disabled in this context — the human is not present " +
	"to answer synchronously. Do not ask for confirmation. Proceed with your " +
	"best judgment, carry out the requested action, and state any assumptions " +
	"you made in your final response."

var (
	formFieldTypes = map[string]bool{"text": true, "textarea": true, "number": true, "select": true,
		"multi_select": true, "checkbox": true, "date": true}
	optionFieldTypes   = map[string]bool{"select": true, "multi_select": true}
	reservedFieldNames = map[string]bool{"__proto__": true, "constructor": true, "prototype": true,
		"toString": true, "toLocaleString": true, "valueOf": true, "hasOwnProperty": true,
		"isPrototypeOf": true, "propertyIsEnumerable": true, "__defineGetter__": true,
		"__defineSetter__": true, "__lookupGetter__": true, "__lookupSetter__": true}
	clarificationIcons = map[string]string{"missing_info": "❓", "ambiguous_requirement": "🤔",
		"approach_choice": "🔀", "risk_confirmation": "⚠️", "suggestion": "💡"}
	xmlTagRE = regexp.MustCompile(`</?[A-Za-z_][\w:.-]*(?:\s[^<>]*?)?\s*/?>`)
)

// Clarification returns DeerFlow's ClarificationMiddleware as a tool
// middleware. A call named ask_clarification never reaches the tool: it
// becomes the question shown to the user, with the structured
// human_input payload in the tool message's artifact, and ends the run
// (the next user message on the thread resumes it). When the run context
// sets disable_clarification the call instead returns a result telling the
// agent to proceed, and the run goes on.
//
// It belongs last in the tool middleware list (innermost), as in DeerFlow.
func Clarification() tool.Middleware {
	return func(next tool.Handler) tool.Handler {
		return func(ctx context.Context, call *tool.Call, args json.RawMessage) (*tool.Result, error) {
			if call.Name != builtin.AskClarificationName {
				return next(ctx, call, args)
			}
			if call.ContextBool("disable_clarification") {
				call.Log().Info("ask_clarification suppressed (disable_clarification set); instructing agent to proceed")
				r := tool.Text(ClarificationDisabledText)
				r.MessageID = clarificationMessageID(call.ID, clarificationDisabledID)
				return r, nil
			}
			m, err := decodeArgs(args)
			if err != nil || m == nil {
				m = map[string]any{}
			}
			return ClarificationResult(call.ID, m), nil
		}
	}
}

// ClarificationResult builds the result of an intercepted
// ask_clarification call from its decoded arguments: the text fallback,
// the stable message id and the human_input payload, with End set.
func ClarificationResult(toolCallID string, args map[string]any) *tool.Result {
	fields := normalizeFields(args["fields"])
	text := formatClarification(args, fields)
	id := clarificationMessageID(toolCallID, text)
	payload := humanInputPayload(args, toolCallID, id, fields)
	r := tool.Text(text)
	r.MessageID = id
	r.Artifact = map[string]any{"human_input": payload}
	r.End = true
	return r
}

// clarificationMessageID is "clarification:{tool_call_id}", or a digest
// of the text when the call has no id, so a retried call replaces its
// earlier message instead of appending.
func clarificationMessageID(toolCallID, text string) string {
	if toolCallID != "" {
		return "clarification:" + toolCallID
	}
	sum := sha256.Sum256([]byte(text))
	return "clarification:" + hex.EncodeToString(sum[:])[:16]
}

// normalizeOptions turns whatever the model sent as options into display
// strings: a JSON string is decoded (a non-JSON string is one option), a
// dict is flattened to its scalar leaves, a scalar is wrapped; each option
// is stringified, stripped of XML-like tags and trimmed; blanks and
// duplicates are dropped, order kept.
func normalizeOptions(raw any) []string {
	opts := raw
	if s, ok := opts.(string); ok {
		if v, ok := decodeJSONString(s); ok {
			opts = v
		} else {
			opts = []any{s}
		}
	}
	var items []any
	switch x := opts.(type) {
	case nil:
		return nil
	case map[string]any:
		items = flattenScalars(x, nil)
	case []any:
		items = x
	default:
		items = []any{x}
	}
	out := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for _, o := range items {
		text := strings.TrimSpace(xmlTagRE.ReplaceAllString(pyStr(o), ""))
		if text == "" || seen[text] {
			continue
		}
		seen[text] = true
		out = append(out, text)
	}
	return out
}

// flattenScalars collects the string, number and boolean leaves of a
// decoded value depth-first. Map keys are visited in the source order
// when it can be recovered; Go maps keep none, so keys are sorted.
func flattenScalars(v any, out []any) []any {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			out = flattenScalars(x[k], out)
		}
	case []any:
		for _, e := range x {
			out = flattenScalars(e, out)
		}
	case string, json.Number, float64, bool:
		out = append(out, x)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func normalizeBool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case json.Number, float64:
		return pyTruthy(x)
	case string:
		return strings.ToLower(strings.TrimSpace(x)) == "true"
	}
	return false
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// normalizeFields validates and normalises form fields atomically: any
// structural problem (not a list, too many fields, a non-object entry, a
// missing, reserved, duplicate or over-long name, over-long label,
// placeholder or option, too many options, a form too large once
// serialised) drops the whole form. Unknown types become text, and a
// select without options becomes text.
func normalizeFields(raw any) []map[string]any {
	fields := raw
	if s, ok := fields.(string); ok {
		v, ok := decodeJSONString(s)
		if !ok {
			return nil
		}
		fields = v
	}
	list, ok := fields.([]any)
	if !ok || len(list) > maxFormFields {
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	seen := map[string]bool{}
	for _, e := range list {
		entry, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		rawName, ok := entry["name"].(string)
		name := strings.TrimSpace(rawName)
		if !ok || name == "" || reservedFieldNames[name] || seen[name] || runeLen(name) > maxFieldTextChars {
			return nil
		}
		seen[name] = true
		label := name
		if l, ok := entry["label"].(string); ok && strings.TrimSpace(l) != "" {
			label = strings.TrimSpace(l)
		}
		if runeLen(label) > maxFieldTextChars {
			return nil
		}
		typ, ok := entry["type"].(string)
		if !ok || !formFieldTypes[typ] {
			typ = "text"
		}
		var options []string
		if optionFieldTypes[typ] {
			options = normalizeOptions(entry["options"])
		}
		if len(options) > maxFieldOptions {
			return nil
		}
		for _, o := range options {
			if runeLen(o) > maxFieldTextChars {
				return nil
			}
		}
		if optionFieldTypes[typ] && len(options) == 0 {
			typ = "text"
		}
		field := map[string]any{"name": name, "label": label, "type": typ, "required": normalizeBool(entry["required"])}
		if optionFieldTypes[typ] {
			opts := make([]any, len(options))
			for i, o := range options {
				opts[i] = map[string]any{"id": fmt.Sprintf("%s-option-%d", name, i+1), "label": o, "value": o}
			}
			field["options"] = opts
		}
		if p, ok := entry["placeholder"].(string); ok && strings.TrimSpace(p) != "" {
			p = strings.TrimSpace(p)
			if runeLen(p) > maxFieldTextChars {
				return nil
			}
			field["placeholder"] = p
		}
		out = append(out, field)
	}
	if pyDumpsLen(out) > maxFormSerializedBytes {
		return nil
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// formatClarification renders the plain-text question (the tool
// message's content, shown by clients that do not read the payload).
func formatClarification(args map[string]any, fields []map[string]any) string {
	question := ""
	if q, ok := args["question"]; ok {
		question = pyStr(q)
	}
	ctype := "missing_info"
	if t, ok := args["clarification_type"]; ok {
		ctype = pyStr(t)
	}
	icon, ok := clarificationIcons[ctype]
	if !ok {
		icon = "❓"
	}
	var parts []string
	if c := args["context"]; pyTruthy(c) {
		parts = append(parts, icon+" "+pyStr(c), "\n"+question)
	} else {
		parts = append(parts, icon+" "+question)
	}
	if len(fields) > 0 {
		parts = append(parts, "")
		for i, f := range fields {
			line := fmt.Sprintf("  %d. %s", i+1, f["label"])
			if f["required"] == true {
				line += " (required)"
			}
			if opts, ok := f["options"].([]any); ok && len(opts) > 0 {
				labels := make([]string, len(opts))
				for j, o := range opts {
					labels[j] = o.(map[string]any)["label"].(string)
				}
				line += " — options: " + strings.Join(labels, " / ")
				if f["type"] == "multi_select" {
					line += " (multiple allowed)"
				}
			}
			parts = append(parts, line)
		}
		parts = append(parts, "", "Please reply with a value for each field.")
	} else if options := normalizeOptions(optionsArg(args)); len(options) > 0 {
		parts = append(parts, "")
		for i, o := range options {
			parts = append(parts, fmt.Sprintf("  %d. %s", i+1, o))
		}
	}
	return strings.Join(parts, "\n")
}

// optionsArg is args.get("options", []).
func optionsArg(args map[string]any) any {
	if v, ok := args["options"]; ok {
		return v
	}
	return []any{}
}

// humanInputPayload builds the structured request that DeerFlow's
// frontend renders (ToolMessage.artifact.human_input): version 2 for a
// form, 1 for free text or a choice.
func humanInputPayload(args map[string]any, toolCallID, requestID string, fields []map[string]any) map[string]any {
	options := normalizeOptions(optionsArg(args))
	ctype := "missing_info"
	if t, ok := args["clarification_type"]; ok {
		ctype = pyStr(t)
	}
	version, mode := 1, "free_text"
	switch {
	case len(fields) > 0:
		version, mode = 2, "form"
	case len(options) > 0:
		mode = "choice_with_other"
	}
	question := ""
	if q := args["question"]; pyTruthy(q) {
		question = pyStr(q)
	}
	p := map[string]any{
		"version":            version,
		"kind":               "human_input_request",
		"source":             builtin.AskClarificationName,
		"request_id":         requestID,
		"clarification_type": ctype,
		"question":           question,
		"input_mode":         mode,
	}
	if toolCallID != "" {
		p["tool_call_id"] = toolCallID
	}
	if c, ok := args["context"]; ok {
		if c == nil {
			p["context"] = nil
		} else {
			p["context"] = pyStr(c)
		}
	}
	switch {
	case mode == "form":
		fs := make([]any, len(fields))
		for i, f := range fields {
			fs[i] = f
		}
		p["fields"] = fs
	case len(options) > 0:
		opts := make([]any, len(options))
		for i, o := range options {
			opts[i] = map[string]any{"id": fmt.Sprintf("option-%d", i+1), "label": o, "value": o}
		}
		p["options"] = opts
	}
	return p
}
