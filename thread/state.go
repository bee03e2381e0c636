package thread

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/antlerhq/antler/model"
)

// State is the persisted state of one thread.
type State struct {
	Messages      []model.Message        `json:"messages"`
	Sandbox       *Sandbox               `json:"sandbox,omitempty"`
	ThreadData    *ThreadData            `json:"thread_data,omitempty"`
	Artifacts     []string               `json:"artifacts,omitempty"`
	ViewedImages  map[string]ViewedImage `json:"viewed_images,omitempty"`
	Promoted      *Promoted              `json:"promoted,omitempty"`
	Todos         []Todo                 `json:"todos,omitempty"`
	Delegations   []Delegation           `json:"delegations,omitempty"`
	SkillContext  []SkillContext         `json:"skill_context,omitempty"`
	UploadedFiles []UploadedFile         `json:"uploaded_files,omitempty"`
	Title         string                 `json:"title,omitempty"`
	SummaryText   string                 `json:"summary_text,omitempty"`
	Goal          string                 `json:"goal,omitempty"`
	// Approvals are the tool calls waiting for a human's answer;
	// ApprovalGrants the tools approved for the rest of the thread.
	Approvals      []Approval      `json:"approvals,omitempty"`
	ApprovalGrants []ApprovalGrant `json:"approval_grants,omitempty"`
	// Extra holds keys this version does not model, so that a state
	// written by a newer version or by DeerFlow round-trips.
	Extra map[string]json.RawMessage `json:"extra,omitempty"`
}

// Sandbox records the sandbox a thread is bound to.
type Sandbox struct {
	SandboxID string `json:"sandbox_id,omitempty"`
}

// ThreadData holds the host paths of a thread's user-data folders.
type ThreadData struct {
	WorkspacePath string `json:"workspace_path,omitempty"`
	UploadsPath   string `json:"uploads_path,omitempty"`
	OutputsPath   string `json:"outputs_path,omitempty"`
}

// ViewedImage is the metadata view_image keeps about an image; the bytes
// are never stored in the state.
type ViewedImage struct {
	MIMEType   string `json:"mime_type"`
	Size       int64  `json:"size"`
	ActualPath string `json:"actual_path"`
}

// Promoted lists the deferred tools whose schemas tool_search has
// revealed, scoped to the catalogue they were found in.
type Promoted struct {
	CatalogHash string   `json:"catalog_hash"`
	Names       []string `json:"names"`
}

// Todo is one entry of a plan-mode todo list.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// UploadedFile describes a file the user uploaded into the thread.
type UploadedFile struct {
	Filename    string `json:"filename"`
	Size        int64  `json:"size"`
	Path        string `json:"path"`
	VirtualPath string `json:"virtual_path,omitempty"`
}

// Clone returns a deep copy of the parts of s that reducers mutate, so the
// copy can be handed to concurrent readers while s keeps changing.
func (s *State) Clone() *State {
	if s == nil {
		return &State{}
	}
	c := s.cloneParts()
	c.Messages = slices.Clone(s.Messages)
	return c
}

// cloneParts is Clone without the messages (c.Messages is s.Messages).
func (s *State) cloneParts() *State {
	c := *s
	if s.Sandbox != nil {
		sb := *s.Sandbox
		c.Sandbox = &sb
	}
	if s.ThreadData != nil {
		td := *s.ThreadData
		c.ThreadData = &td
	}
	c.Artifacts = slices.Clone(s.Artifacts)
	c.ViewedImages = maps.Clone(s.ViewedImages)
	if s.Promoted != nil {
		p := Promoted{CatalogHash: s.Promoted.CatalogHash, Names: slices.Clone(s.Promoted.Names)}
		c.Promoted = &p
	}
	c.Todos = slices.Clone(s.Todos)
	c.Delegations = slices.Clone(s.Delegations)
	c.SkillContext = slices.Clone(s.SkillContext)
	c.UploadedFiles = slices.Clone(s.UploadedFiles)
	c.Approvals = slices.Clone(s.Approvals)
	c.ApprovalGrants = slices.Clone(s.ApprovalGrants)
	c.Extra = maps.Clone(s.Extra)
	return &c
}

// View returns a copy of s that shares its messages with s: the other
// parts are deep copies (as Clone makes them), and Messages is s.Messages
// capped at its length, so an append to the copy allocates a new array
// instead of writing into s's spare capacity. It costs what the state
// without its messages costs, whatever the thread's length. Readers of a
// view must not change its messages in place (replace the slice, as the
// reducers do); the state's owner must not either, since views see it.
func (s *State) View() *State {
	if s == nil {
		return &State{}
	}
	c := s.cloneParts()
	c.Messages = s.Messages[:len(s.Messages):len(s.Messages)]
	return c
}
