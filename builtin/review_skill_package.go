package builtin

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	"github.com/antlerhq/antler/skills"
	"github.com/antlerhq/antler/skills/review"
	"github.com/antlerhq/antler/tool"
	"github.com/antlerhq/antler/vpath"
)

// ReviewSkillPackageName is the name of the review_skill_package tool.
const ReviewSkillPackageName = "review_skill_package"

//go:embed review_skill_package.md
var reviewSkillPackageDescription string

const reviewSkillPackageSchema = `{
  "type": "object",
  "properties": {
    "target": {"type": "string", "description": "Review target: skill://<public|custom|legacy>/<name>, inline://SKILL.md, or a skill folder or .skill archive under /mnt/user-data, /mnt/skills or a mount."},
    "profile": {"type": "string", "enum": ["deerflow", "agentskills"], "default": "deerflow", "description": "Validation profile to apply."},
    "include_content": {"type": "string", "enum": ["none", "facts-only", "semantic-review"], "default": "semantic-review", "description": "Whether to include bounded text artifacts for a semantic review."},
    "scope": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Review dimensions the user asked for; [\"all\"] for a full review."},
    "inline_content": {"type": ["string", "null"], "description": "The pasted SKILL.md text when target is inline://SKILL.md."}
  },
  "required": ["target"]
}`

type reviewSkillPackageArgs struct {
	Target         string   `json:"target"`
	Profile        string   `json:"profile,omitempty"`
	IncludeContent string   `json:"include_content,omitempty"`
	Scope          []string `json:"scope,omitempty"`
	InlineContent  *string  `json:"inline_content,omitempty"`
}

// ReviewSkillPackageOptions configure NewReviewSkillPackage.
type ReviewSkillPackageOptions struct {
	// Layout maps the virtual paths of local targets; required.
	Layout *vpath.Layout
	// Skills locates installed skills for skill:// targets; required.
	Skills *skills.Store
	// Neutralize makes the model-visible JSON safe to enter the model's
	// context (untrusted control tags and boundary markers); required.
	// Antler passes agent.NeutralizeUntrustedTags, which builtin cannot
	// import.
	Neutralize func(string) string
	// Limits bound what is read of a package; zero fields are the
	// defaults of package review (DeerFlow's limits).
	Limits review.Limits
	// Now stamps the report's completion time; nil is time.Now.
	Now func() time.Time
}

// NewReviewSkillPackage returns the review_skill_package tool (DeerFlow's
// review_skill_package_tool.py): a skill package inspected as data,
// never activated. The model reads a compact JSON payload (facts, the
// static report and, for a semantic review, bounded text artifacts),
// neutralised by opts.Neutralize; the full payload, with the report
// rendered as Markdown in English and Chinese, is the result's artifact,
// and Meta["review_subject_entry"] names the package (display_ref,
// package_digest, profile, scope), never a skill_context_entry: a
// reviewed skill is not loaded, so its allowed-tools and secrets never
// apply.
//
// A problem with the target ("Error: failed to review skill package:
// ...") is a result the model can act on; only cancellation is a Go
// error. NewReviewSkillPackage panics if a required option is nil (a
// wiring mistake).
func NewReviewSkillPackage(opts ReviewSkillPackageOptions) *tool.Tool {
	if opts.Layout == nil || opts.Skills == nil || opts.Neutralize == nil {
		panic("builtin.NewReviewSkillPackage: Layout, Skills and Neutralize are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &packageReviewer{opts: opts}
	t, err := tool.NewWithSchema(ReviewSkillPackageName, strings.TrimSpace(reviewSkillPackageDescription),
		json.RawMessage(reviewSkillPackageSchema), r.handle)
	if err != nil {
		panic("builtin.NewReviewSkillPackage: " + err.Error()) // constant schema: a programming error
	}
	return t
}

// packageReviewer runs review_skill_package calls; it is immutable.
type packageReviewer struct {
	opts ReviewSkillPackageOptions
}

// reviewPayload is the model-visible part of a review; fields in the
// sorted order of their JSON names.
type reviewPayload struct {
	Artifacts           []review.Artifact `json:"artifacts"`
	Facts               *review.Facts     `json:"facts"`
	StaticReport        *review.Report    `json:"static_report"`
	UntrustedReviewData bool              `json:"untrusted_review_data"`
}

// reviewArtifact is the whole review, kept beside the tool message.
type reviewArtifact struct {
	Artifacts           []review.Artifact `json:"artifacts"`
	Facts               *review.Facts     `json:"facts"`
	Markdown            map[string]string `json:"markdown"`
	StaticReport        *review.Report    `json:"static_report"`
	UntrustedReviewData bool              `json:"untrusted_review_data"`
}

func (r *packageReviewer) handle(ctx context.Context, call *tool.Call, in reviewSkillPackageArgs) (*tool.Result, error) {
	profile := review.Profile(in.Profile)
	if profile == "" {
		profile = review.ProfileDeerFlow
	}
	scope := in.Scope
	if len(scope) == 0 {
		scope = []string{"all"}
	}
	snap, err := r.snapshot(ctx, call, in)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return tool.Errorf("failed to review skill package: %s", err.Error()), nil
	}
	facts := review.Analyze(snap, profile)
	artifacts := []review.Artifact{}
	if in.IncludeContent == "" || in.IncludeContent == "semantic-review" {
		artifacts = review.SemanticArtifacts(snap)
	}
	report := review.BuildReport(facts, scope, r.opts.Now().UTC().Format("2006-01-02T15:04:05Z"))
	visible, err := review.MarshalStable(reviewPayload{Artifacts: artifacts, Facts: facts, StaticReport: report, UntrustedReviewData: true})
	if err != nil {
		return nil, fmt.Errorf("review_skill_package: encode result: %w", err)
	}
	full, err := review.MarshalStable(reviewArtifact{Artifacts: artifacts, Facts: facts, StaticReport: report, UntrustedReviewData: true,
		Markdown: map[string]string{
			"en": review.RenderMarkdown(report, facts, review.LocaleEN),
			"zh": review.RenderMarkdown(report, facts, review.LocaleZH),
		}})
	if err != nil {
		return nil, fmt.Errorf("review_skill_package: encode artifact: %w", err)
	}
	res := neutralizedJSON(r.opts.Neutralize(string(visible)))
	res.Artifact = json.RawMessage(full)
	res.Meta = map[string]any{"review_subject_entry": map[string]any{
		"display_ref":    facts.Subject.DisplayRef,
		"package_digest": facts.Subject.PackageDigest,
		"profile":        string(profile),
		"scope":          scope,
	}}
	return res, nil
}

// neutralizedJSON is a json block of text, or a text block should the
// neutraliser ever leave it invalid JSON.
func neutralizedJSON(text string) *tool.Result {
	if json.Valid([]byte(text)) {
		return &tool.Result{Content: []tool.Block{{Type: tool.BlockJSON, JSON: json.RawMessage(text)}}}
	}
	return tool.Text(text)
}

// snapshot reads the package target names.
func (r *packageReviewer) snapshot(ctx context.Context, call *tool.Call, in reviewSkillPackageArgs) (*review.Snapshot, error) {
	switch {
	case strings.HasPrefix(in.Target, "inline://"):
		if in.InlineContent == nil {
			return nil, errors.New("inline_content is required for inline:// targets")
		}
		return review.InlineSnapshot(*in.InlineContent, in.Target, r.opts.Limits), nil
	case strings.HasPrefix(in.Target, "skill://"):
		return r.installed(ctx, call, in.Target)
	}
	return r.local(ctx, call, in.Target)
}

// installed reads skill://<category>/<path>: below the public or legacy
// skills folder, or the calling user's custom skills folder.
func (r *packageReviewer) installed(ctx context.Context, call *tool.Call, target string) (*review.Snapshot, error) {
	category, rest, ok := strings.Cut(strings.TrimPrefix(target, "skill://"), "/")
	var root string
	switch skills.Category(category) {
	case skills.CategoryPublic:
		root = r.opts.Skills.PublicRoot()
	case skills.CategoryLegacy:
		root = r.opts.Skills.LegacyRoot()
	case skills.CategoryCustom:
		root = r.opts.Skills.CustomRoot(callUserID(call))
	default:
		ok = false
	}
	if !ok {
		return nil, targetError("Skill target must include category: public, custom, or legacy (skill://<category>/<relative-path>)")
	}
	rel, err := review.NormalizePath(rest)
	if err != nil {
		return nil, fmt.Errorf("skill target %s: %w", target, err)
	}
	subject := review.Subject{Source: review.SourceInstalled, Category: &category,
		NameHint: ptr(path.Base(rel)), DisplayRef: "skill://" + category + "/" + rel}
	if root == "" {
		return nil, fmt.Errorf("no %s skills folder is configured (skills.path)", category)
	}
	parent, err := os.OpenRoot(root)
	if errors.Is(err, fs.ErrNotExist) {
		return review.ReadDirPath(ctx, root, subject, r.opts.Limits) // root_not_found
	}
	if err != nil {
		return nil, fmt.Errorf("cannot open the %s skills folder: %s", category, errorKind(err))
	}
	defer parent.Close()
	snap, err := review.ReadDirAt(ctx, parent, rel, subject, r.opts.Limits)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("cannot open %s: %s", subject.DisplayRef, errorKind(err))
	}
	return snap, err
}

// targetError refuses a target with DeerFlow's text, a capitalised
// sentence the model reads.
type targetError string

func (e targetError) Error() string { return string(e) }

// errLocalTarget is DeerFlow's refusal of a folder that is no package.
const errLocalTarget = targetError("Local review targets must be .skill archives or directories containing a root SKILL.md")

// local reads a folder or .skill archive at a virtual path of the call's
// thread; a relative path is taken from the workspace.
func (r *packageReviewer) local(ctx context.Context, call *tool.Call, target string) (*review.Snapshot, error) {
	threadID := callThreadID(call)
	if threadID == "" {
		return nil, errors.New("local review targets need a thread; use skill:// or inline:// targets")
	}
	virtual := target
	if !strings.HasPrefix(strings.ReplaceAll(target, `\`, "/"), "/") {
		virtual = vpath.Workspace + "/" + target
	}
	loc, err := r.opts.Layout.Locate(callUserID(call), threadID, virtual, vpath.Read)
	if errors.Is(err, vpath.ErrNotAllowed) {
		return nil, targetError(fmt.Sprintf("Local review targets must be under %s/, the skills path or a configured mount: %s", vpath.UserData, target))
	}
	if err != nil {
		return nil, err // a *vpath.Error, whose text is for the model
	}
	jail, err := os.OpenRoot(loc.Root.Jail)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist", target)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %s", target, errorKind(err))
	}
	defer jail.Close()
	name := path.Base(loc.Virtual)
	if strings.HasSuffix(loc.Virtual, ".skill") {
		return readArchiveIn(ctx, jail, loc.Rel, name, target, r.opts.Limits)
	}
	if fi, err := jail.Stat(loc.Rel); err != nil || !fi.IsDir() {
		return nil, errLocalTarget
	}
	if fi, err := jail.Stat(path.Join(loc.Rel, review.SkillFile)); err != nil || !fi.Mode().IsRegular() {
		return nil, errLocalTarget
	}
	subject := review.Subject{Source: review.SourceDirectory, DisplayRef: name, NameHint: ptr(name)}
	snap, err := review.ReadDirAt(ctx, jail, loc.Rel, subject, r.opts.Limits)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%s: %s", target, errorKind(err))
	}
	return snap, err
}

// readArchiveIn reads the .skill archive rel of jail.
func readArchiveIn(ctx context.Context, jail *os.Root, rel, name, target string, limits review.Limits) (*review.Snapshot, error) {
	f, err := jail.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("cannot open archive %s: %s", target, errorKind(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a .skill archive file", target)
	}
	return review.ReadArchive(ctx, f, fi.Size(), name, limits)
}

func ptr[T any](v T) *T { return &v }
