package model

import "testing"

func TestMessageText(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		want string
	}{
		{"content only", Message{Content: "hi"}, "hi"},
		{"parts only", Message{Parts: []Part{{Type: PartText, Text: "a"}, {Type: PartText, Text: "b"}}}, "a\nb"},
		{"content and parts", Message{Content: "c", Parts: []Part{{Type: PartText, Text: "p"}}}, "c\np"},
		{"non-text and empty parts left out", Message{Parts: []Part{{Type: PartImage}, {Type: PartText}, {Type: PartText, Text: "t"}}}, "t"},
		{"empty", Message{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.msg.Text(); got != tt.want {
				t.Errorf("Text() = %q, want %q", got, tt.want)
			}
		})
	}
}
