package search

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/antlerhq/antler/tool"
)

func TestSearch(t *testing.T) {
	tools := []*tool.Tool{
		testTool("github", "github_list_issues", "List issues in a repository."),
		testTool("github", "github_create_issue", "Create a new issue in a repository."),
		testTool("slack", "slack_list_channels", "List the channels of a workspace."),
		testTool("fs", "fs_read_file", "Read a text file."),
	}
	ix := Build(tools, nil)
	tests := []struct {
		name, query string
		limit       int
		want        []string
	}{
		{"words, best first", "create an issue", 2, []string{"github_create_issue", "github_list_issues"}},
		{"regex matches first, name matches before description matches", "list", 0, []string{"github_list_issues", "slack_list_channels"}},
		{"a regex", "^slack_.*chan", 5, []string{"slack_list_channels"}},
		{"limit ≤ 0 returns every match", "repository issues", 0, []string{"github_list_issues", "github_create_issue"}},
		{"an invalid regex is a literal", "issue(", 5, []string{"github_list_issues", "github_create_issue"}},
		{"nothing shared", "zzqx", 5, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := []string{}
			for _, tl := range ix.Search(tt.query, tt.limit) {
				got = append(got, tl.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q, %d) (-want +got):\n%s", tt.query, tt.limit, diff)
			}
		})
	}
}

func TestRerank(t *testing.T) {
	tools := []*tool.Tool{
		testTool("", "x_read", "Read a file."),                        // no match, no shared term
		testTool("", "x_create", "Create a file."),                    // two matches
		testTool("", "x_make", "Create, create, then create."),        // three matches
		testTool("", "y_long", "Create one; longer notes dilute it."), // one match
		testTool("", "y_short", "Create one."),                        // one match, a shorter description
		testTool("", "x_write", "Write a file."),                      // no match, no shared term
	}
	ix := Build(tools, nil)
	tests := []struct {
		name, query string
		docs, want  []int
	}{
		{"matches, then relevance, then the given order", "create", []int{0, 5, 3, 4, 1, 2}, []int{2, 1, 4, 3, 0, 5}},
		{"a subset", "create", []int{4, 0, 1}, []int{1, 4, 0}},
		{"one document", "create", []int{0}, []int{0}},
		{"none", "create", []int{}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := append([]int{}, tt.docs...)
			ix.Rerank(tt.query, got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Rerank(%q, %v) (-want +got):\n%s", tt.query, tt.docs, diff)
			}
		})
	}
}
