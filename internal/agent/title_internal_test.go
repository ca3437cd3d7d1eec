package agent

import "testing"

func TestCleanTitle(t *testing.T) {
	for _, tc := range []struct{ reply, want string }{
		{"Sad songs for rainy days", "Sad songs for rainy days"},
		{"\n\n  \"Sad songs.\"  \nSecond line", "Sad songs"},
		{"Title: **Jazz standards**", "Jazz standards"},
		{"TITLE: «שירים עצובים»", "שירים עצובים"},
		{"`\"\"`", ""},
		{"", ""},
	} {
		if got := cleanTitle(tc.reply); got != tc.want {
			t.Errorf("cleanTitle(%q) = %q, want %q", tc.reply, got, tc.want)
		}
	}
}
