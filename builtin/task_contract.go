package builtin

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/antlerhq/antler/model"
)

// TaskStatus is the terminal status of a delegated task (DeerFlow's subagents/status_contract.py).
type TaskStatus string

// The task statuses.
const (
	TaskCompleted       TaskStatus = "completed"
	TaskFailed          TaskStatus = "failed"
	TaskCancelled       TaskStatus = "cancelled"
	TaskTimedOut        TaskStatus = "timed_out"
	TaskPollingTimedOut TaskStatus = "polling_timed_out"
)

// Valid reports whether s is one of the contract's statuses.
func (s TaskStatus) Valid() bool {
	switch s {
	case TaskCompleted, TaskFailed, TaskCancelled, TaskTimedOut, TaskPollingTimedOut:
		return true
	}
	return false
}

// TaskStopReason says which guardrail cap ended a task early. A capped
// task that still produced an answer is completed; one that did not is
// failed; the reason is carried beside the status.
type TaskStopReason string

// The stop reasons.
const (
	StopTokenCapped TaskStopReason = "token_capped"
	StopTurnCapped  TaskStopReason = "turn_capped"
	StopLoopCapped  TaskStopReason = "loop_capped"
)

// Valid reports whether r is empty or one of the contract's stop reasons.
func (r TaskStopReason) Valid() bool {
	switch r {
	case "", StopTokenCapped, StopTurnCapped, StopLoopCapped:
		return true
	}
	return false
}

// label is the phrase folded into the result text: "(capped: ...)".
func (r TaskStopReason) label() string {
	switch r {
	case StopTokenCapped:
		return "token budget"
	case StopTurnCapped:
		return "turn budget"
	case StopLoopCapped:
		return "repeated tool-call loop"
	}
	return ""
}

// NormalizeStopReason maps legacy stop reasons read from stored results
// ("max_turns_reached") to the current ones.
func NormalizeStopReason(s string) TaskStopReason {
	if s == "max_turns_reached" {
		return StopTurnCapped
	}
	return TaskStopReason(s)
}

// Keys of the structured task result, stamped into the tool message's
// metadata (DeerFlow's ToolMessage.additional_kwargs).
const (
	MetaSubagentStatus       = "subagent_status"
	MetaSubagentStopReason   = "subagent_stop_reason"
	MetaSubagentError        = "subagent_error"
	MetaSubagentResultBrief  = "subagent_result_brief"
	MetaSubagentResultSHA256 = "subagent_result_sha256"
	MetaSubagentModelName    = "subagent_model_name"
	MetaSubagentTokenUsage   = "subagent_token_usage"
)

// taskBriefMaxChars bounds the brief and error texts in the metadata.
const taskBriefMaxChars = 2000

// taskBrief bounds s (trimmed) to max characters: the first two thirds,
// "\n...\n", and the tail.
func taskBrief(s string, max int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	const marker = "\n...\n"
	if max <= len(marker) {
		return string(r[:max])
	}
	head := max * 2 / 3
	tail := max - head - len(marker)
	if tail <= 0 {
		return string(r[:max])
	}
	return string(r[:head]) + marker + string(r[len(r)-tail:])
}

// TaskResultText returns the model-visible text of a task result and the
// error detail recorded in the metadata ("" for completed tasks).
func TaskResultText(r TaskResult) (text, detail string) {
	errText := strings.TrimSpace(r.Error)
	capped := r.StopReason.label()
	switch r.Status {
	case TaskCompleted:
		if capped != "" {
			return fmt.Sprintf("Task Succeeded (capped: %s). Result: %s", capped, r.Result), ""
		}
		return "Task Succeeded. Result: " + r.Result, ""
	case TaskCancelled:
		const plain = "Task cancelled by user."
		if errText == "" || errText == plain {
			return plain, plain
		}
		return "Task cancelled by user. Error: " + errText, errText
	case TaskTimedOut:
		const plain = "Task timed out."
		if errText == "" || errText == plain {
			return plain, plain
		}
		return "Task timed out. Error: " + errText, errText
	case TaskPollingTimedOut:
		if errText == "" {
			errText = "Task polling timed out."
		}
		return errText, errText
	}
	const plain = "Task failed."
	detail = errText
	if detail == "" {
		detail = plain
	}
	switch {
	case capped != "" && detail == plain:
		return fmt.Sprintf("Task failed (capped: %s).", capped), detail
	case capped != "":
		return fmt.Sprintf("Task failed (capped: %s). Error: %s", capped, detail), detail
	case detail == plain:
		return plain, detail
	}
	return "Task failed. Error: " + detail, detail
}

// TaskResultMeta returns the structured metadata of a task result. It
// fails on a status or stop reason outside the contract: a typo must not
// reach clients as silently missing metadata.
func TaskResultMeta(r TaskResult) (map[string]any, error) {
	if !r.Status.Valid() {
		return nil, fmt.Errorf("builtin: invalid subagent status %q", r.Status)
	}
	if !r.StopReason.Valid() {
		return nil, fmt.Errorf("builtin: invalid subagent stop reason %q", r.StopReason)
	}
	_, detail := TaskResultText(r)
	m := map[string]any{MetaSubagentStatus: string(r.Status)}
	if r.Status == TaskCompleted && strings.TrimSpace(r.Result) != "" {
		m[MetaSubagentResultBrief] = taskBrief(r.Result, taskBriefMaxChars)
		sum := sha256.Sum256([]byte(r.Result))
		m[MetaSubagentResultSHA256] = hex.EncodeToString(sum[:])
	}
	if r.Status != TaskCompleted && strings.TrimSpace(detail) != "" {
		m[MetaSubagentError] = taskBrief(detail, taskBriefMaxChars)
	}
	if r.StopReason != "" {
		m[MetaSubagentStopReason] = string(r.StopReason)
	}
	if name := strings.TrimSpace(r.ModelName); name != "" {
		m[MetaSubagentModelName] = name
	}
	if u := usageMap(r.Usage); u != nil {
		m[MetaSubagentTokenUsage] = u
	}
	return m, nil
}

// usageMap is the contract's usage shape, or nil when usage is unknown or
// malformed (negative counts).
func usageMap(u *model.Usage) map[string]int64 {
	if u == nil || u.InputTokens < 0 || u.OutputTokens < 0 || u.TotalTokens < 0 {
		return nil
	}
	return map[string]int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens, "total_tokens": u.TotalTokens}
}

// MergeSkillAllowlists returns a subagent's effective skill allowlist
// under its parent's: a nil parent allows the child's list; a nil child
// inherits the parent's; otherwise the child's entries that the parent
// allows, in the child's order.
func MergeSkillAllowlists(parent, child []string) []string {
	if parent == nil {
		return child
	}
	if child == nil {
		return append([]string{}, parent...)
	}
	allowed := make(map[string]bool, len(parent))
	for _, s := range parent {
		allowed[s] = true
	}
	out := []string{}
	for _, s := range child {
		if allowed[s] {
			out = append(out, s)
		}
	}
	return out
}
