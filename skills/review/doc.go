// Package review inspects a skill package without activating, installing
// or running it: DeerFlow's deterministic skill review core
// (deerflow/skills/review), behind the built-in review_skill_package.
//
// A review has three steps. A reader makes a [Snapshot] of the package:
// [ReadDir] walks a folder through an *os.Root (symlinks are recorded,
// never followed), [ReadArchive] reads a .skill ZIP archive, and
// [InlineSnapshot] wraps a pasted SKILL.md. Every reader is bounded by
// [Limits] (file count, bytes per file, bytes in all, and for archives
// the size of the central directory) and refuses paths that are absolute
// or climb out of the package: such entries become reader errors in the
// snapshot, never files. [Analyze] turns a snapshot into [Facts]
// (DeerFlow's review-facts.v1: structure and frontmatter findings, the
// static scanner's findings, the resource graph, eval manifests, the
// package digest), and [BuildReport] turns facts into a [Report]
// (review-report.v1) that [RenderMarkdown] renders in English or Chinese.
//
// Facts and reports marshal to the JSON of DeerFlow's contracts
// (contracts/skill_review/*.schema.json), with keys in sorted order as
// DeerFlow's stable_json_dumps writes them. The package holds no state;
// the snapshot is the only thing read from disk.
package review
