package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/antlerhq/antler/skills/review"
)

// newSkillsCmd is "antler skills": commands over skill packages.
func newSkillsCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "skills",
		Short: "Work with skill packages",
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newSkillsReviewCmd(g))
	return c
}

// skillsReviewFlags are the flags of "antler skills review".
type skillsReviewFlags struct {
	profile, format, failOn string
	failOnIncomplete        bool
	limits                  review.Limits
}

// failOnLevels are the --fail-on values, from the most lenient.
var failOnLevels = []string{"never", "warning", "error", "blocker"}

func newSkillsReviewCmd(_ *globals) *cobra.Command {
	var fl skillsReviewFlags
	c := &cobra.Command{
		Use:   "review TARGET",
		Short: "Review a skill folder or .skill archive without running it",
		Long: `Review a skill package on this machine as review_skill_package does,
without activating, installing or running it: TARGET is a folder with a
root SKILL.md or a .skill archive (a host path). The facts are printed as
JSON (DeerFlow's review-facts.v1) or, with --format text, as a summary and
one line per finding. Nothing needs a config file.

As a CI gate: --fail-on error exits 1 when a finding is an error or a
blocker, and --fail-on-incomplete exits 1 when part of the package was
not assessed (a limit was reached).`,
		Example: `  antler skills review skills/public/my-skill
  antler skills review --format text --fail-on error --fail-on-incomplete build/my-skill.skill`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if !slices.Contains([]string{"deerflow", "agentskills"}, fl.profile) {
				return usageErrorf("--profile must be deerflow or agentskills, not %q", fl.profile)
			}
			if !slices.Contains([]string{"json", "text"}, fl.format) {
				return usageErrorf("--format must be json or text, not %q", fl.format)
			}
			if !slices.Contains(failOnLevels, fl.failOn) {
				return usageErrorf("--fail-on must be one of %s, not %q", strings.Join(failOnLevels, ", "), fl.failOn)
			}
			if fl.limits.MaxFiles < 1 || fl.limits.MaxFileBytes < 1 || fl.limits.MaxTotalBytes < 1 {
				return usageErrorf("--max-files, --max-file-bytes and --max-total-bytes must be at least 1")
			}
			return runSkillsReview(c.Context(), c.OutOrStdout(), args[0], fl)
		},
	}
	f := c.Flags()
	f.StringVar(&fl.profile, "profile", "deerflow", "validation profile: deerflow or agentskills")
	f.StringVar(&fl.format, "format", "json", "output: json (the facts) or text")
	f.StringVar(&fl.failOn, "fail-on", "never", "exit 1 when a finding is at this severity or worse: never, warning, error or blocker")
	f.BoolVar(&fl.failOnIncomplete, "fail-on-incomplete", false, "exit 1 when part of the package was not assessed")
	f.IntVar(&fl.limits.MaxFiles, "max-files", review.DefaultMaxFiles, "most files read")
	f.Int64Var(&fl.limits.MaxFileBytes, "max-file-bytes", review.DefaultMaxFileBytes, "most bytes read of one file")
	f.Int64Var(&fl.limits.MaxTotalBytes, "max-total-bytes", review.DefaultMaxTotalBytes, "most bytes read in all")
	return c
}

func runSkillsReview(ctx context.Context, out io.Writer, target string, fl skillsReviewFlags) error {
	snap, err := readSkillPackage(ctx, target, fl.limits)
	if err != nil {
		return err
	}
	facts := review.Analyze(snap, review.Profile(fl.profile))
	if fl.format == "json" {
		data, err := review.MarshalStable(facts)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s\n", data)
	} else {
		printReviewText(out, facts)
	}
	return reviewGate(facts, fl)
}

// readSkillPackage snapshots a host folder or .skill archive.
func readSkillPackage(ctx context.Context, target string, limits review.Limits) (*review.Snapshot, error) {
	name := filepath.Base(filepath.Clean(target))
	if _, err := os.Stat(target); err != nil {
		return nil, usageErrorf("cannot review %s: %v", target, errors.Unwrap(err))
	}
	if strings.HasSuffix(target, ".skill") {
		f, err := os.Open(target)
		if err != nil {
			return nil, usageErrorf("cannot open %s: %v", target, errors.Unwrap(err))
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return nil, usageErrorf("%s is not a .skill archive file", target)
		}
		return review.ReadArchive(ctx, f, fi.Size(), name, limits)
	}
	subject := review.Subject{Source: review.SourceDirectory, DisplayRef: name, NameHint: &name}
	return review.ReadDirPath(ctx, target, subject, limits)
}

func printReviewText(out io.Writer, f *review.Facts) {
	s := f.Summary
	notAssessed := strings.Join(f.Completeness.NotAssessed, ",")
	if notAssessed == "" {
		notAssessed = "(none)"
	}
	fmt.Fprintf(out, "Subject: %s\nDigest: %s\n", f.Subject.DisplayRef, f.Subject.PackageDigest)
	fmt.Fprintf(out, "Summary: %d blocker(s), %d error(s), %d warning(s), %d info(s)\n", s.Blockers, s.Errors, s.Warnings, s.Infos)
	truncated := "False" // Python's spelling, as DeerFlow's command prints it
	if f.Completeness.Truncated {
		truncated = "True"
	}
	fmt.Fprintf(out, "Completeness: truncated=%s, not_assessed=%s\n", truncated, notAssessed)
	for _, fd := range f.Findings {
		loc := "<package>"
		if fd.Path != nil {
			loc = *fd.Path
		}
		if fd.Line != nil {
			loc = fmt.Sprintf("%s:%d", loc, *fd.Line)
		}
		fmt.Fprintf(out, "- %s %s at %s: %s\n", fd.Severity, fd.RuleID, loc, fd.Message)
	}
}

// reviewGate is the exit-1 error of a failed --fail-on or
// --fail-on-incomplete gate, or nil.
func reviewGate(f *review.Facts, fl skillsReviewFlags) error {
	if fl.failOnIncomplete && len(f.Completeness.NotAssessed) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("review incomplete: not assessed: %s", strings.Join(f.Completeness.NotAssessed, ", "))}
	}
	if fl.failOn == "never" {
		return nil
	}
	// severities at or above the threshold: blocker=3 ... warning=1.
	threshold := slices.Index(failOnLevels, fl.failOn)
	n := 0
	for _, fd := range f.Findings {
		if slices.Index(failOnLevels, string(fd.Severity)) >= threshold {
			n++
		}
	}
	if n > 0 {
		return &exitError{code: 1, err: fmt.Errorf("review failed: %d finding(s) at %s or worse", n, fl.failOn)}
	}
	return nil
}
