package thread

import (
	"fmt"

	"github.com/antlerhq/antler/model"
)

// Update is a change to a thread's state, returned by tools and
// middlewares. A nil field leaves that key alone; each non-nil field is
// merged with the key's reducer, as its field says.
type Update struct {
	// Messages are appended, or replace the message with the same ID;
	// a message with Remove set deletes by ID (RemoveAllID clears).
	Messages []model.Message `json:"messages,omitempty"`
	// Sandbox is taken when none is recorded and otherwise kept; a
	// different sandbox id is a *SandboxConflictError.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// ThreadData replaces the current value.
	ThreadData *ThreadData `json:"thread_data,omitempty"`
	// Artifacts are appended, keeping the first occurrence of each path.
	Artifacts []string `json:"artifacts,omitempty"`
	// ViewedImages are merged per key; a non-nil empty map clears all.
	ViewedImages map[string]ViewedImage `json:"viewed_images,omitempty"`
	// Promoted is merged with MergePromoted.
	Promoted *Promoted `json:"promoted,omitempty"`
	// Todos replaces the list; a non-nil empty slice clears it.
	Todos []Todo `json:"todos,omitempty"`
	// Delegations are upserted by id in first-seen order: a terminal
	// status is never downgraded, the first CreatedAt and RunID are kept,
	// and only the 50 most recent entries survive.
	Delegations []Delegation `json:"delegations,omitempty"`
	// SkillContext entries are de-duplicated by path (a re-read moves the
	// entry to the end), their descriptions collapsed and capped at 500
	// characters, and the 8 most recent are kept.
	SkillContext []SkillContext `json:"skill_context,omitempty"`
	// UploadedFiles replaces the list.
	UploadedFiles []UploadedFile `json:"uploaded_files,omitempty"`
	// Title, SummaryText and Goal replace the current value when non-nil.
	Title       *string `json:"title,omitempty"`
	SummaryText *string `json:"summary_text,omitempty"`
	Goal        *string `json:"goal,omitempty"`
	// Approvals are upserted by call id; an entry with Resolved set
	// removes its call; the 64 most recent are kept (and
	// at most 8 paused subagents among them).
	Approvals []Approval `json:"approvals,omitempty"`
	// ApprovalGrants are added once each; the 64 most recent are
	// kept.
	ApprovalGrants []ApprovalGrant `json:"approval_grants,omitempty"`
}

// IsZero reports whether u changes nothing.
func (u *Update) IsZero() bool {
	return u == nil || (u.Messages == nil && u.Sandbox == nil && u.ThreadData == nil &&
		u.Artifacts == nil && u.ViewedImages == nil && u.Promoted == nil && u.Todos == nil &&
		u.Delegations == nil && u.SkillContext == nil && u.UploadedFiles == nil &&
		u.Title == nil && u.SummaryText == nil && u.Goal == nil && u.Approvals == nil && u.ApprovalGrants == nil)
}

// Apply merges u into s with each key's reducer. On error (a sandbox
// conflict) s is left unchanged.
func (s *State) Apply(u *Update) error {
	if u == nil {
		return nil
	}
	sandbox, err := mergeSandbox(s.Sandbox, u.Sandbox)
	if err != nil {
		return err
	}
	s.Sandbox = sandbox
	if u.Messages != nil {
		s.Messages = MergeMessages(s.Messages, u.Messages)
	}
	if u.ThreadData != nil {
		td := *u.ThreadData
		s.ThreadData = &td
	}
	s.Artifacts = mergeArtifacts(s.Artifacts, u.Artifacts)
	s.ViewedImages = mergeViewedImages(s.ViewedImages, u.ViewedImages)
	s.Promoted = MergePromoted(s.Promoted, u.Promoted)
	if u.Todos != nil {
		s.Todos = append([]Todo{}, u.Todos...)
	}
	if u.Delegations != nil {
		s.Delegations = mergeDelegations(s.Delegations, u.Delegations)
	}
	if u.SkillContext != nil {
		s.SkillContext = mergeSkillContext(s.SkillContext, u.SkillContext)
	}
	if u.UploadedFiles != nil {
		s.UploadedFiles = append([]UploadedFile{}, u.UploadedFiles...)
	}
	if u.Title != nil {
		s.Title = *u.Title
	}
	if u.SummaryText != nil {
		s.SummaryText = *u.SummaryText
	}
	if u.Goal != nil {
		s.Goal = *u.Goal
	}
	if u.Approvals != nil {
		s.Approvals = mergeApprovals(s.Approvals, u.Approvals)
	}
	if u.ApprovalGrants != nil {
		s.ApprovalGrants = mergeApprovalGrants(s.ApprovalGrants, u.ApprovalGrants)
	}
	return nil
}

// SandboxConflictError reports two different sandbox ids written to one
// thread.
type SandboxConflictError struct{ Existing, New string }

func (e *SandboxConflictError) Error() string {
	return fmt.Sprintf("Conflicting sandbox state updates: '%s' != '%s'", e.Existing, e.New)
}
