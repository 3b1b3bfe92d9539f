package redact

import "testing"

func TestURLs(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://user:pass@host/v1?key=abc", "https://user:***@host/v1?key=***"},
		{"https://host/v1", "https://host/v1"},
		{"https://ghp_TOKEN@github.com/o/r.git", "https://***@github.com/o/r.git"},
		{"http://h/x?a=1&api_key=s3&b=2", "http://h/x?a=1&api_key=***&b=2"},
		{"http://h/x?access_token=t&token=u;sig=v", "http://h/x?access_token=***&token=***;sig=***"},
		{"https://b.blob/c?sv=1&X-Amz-Signature=abc&X-Amz-Credential=AK", "https://b.blob/c?sv=1&X-Amz-Signature=***&X-Amz-Credential=***"},
		{"https://app/cb#access_token=xyz&state=1", "https://app/cb#access_token=***&state=1"},
		{`Get "https://u:p@llm/v1/chat?key=k": dial tcp: refused`, `Get "https://u:***@llm/v1/chat?key=***": dial tcp: refused`},
		{"two: http://a?token=1 and ws://b:c@d/e", "two: http://a?token=*** and ws://b:***@d/e"},
		{"no url here, key=abc", "no url here, key=abc"},
		{"https://host/?q=cats&page=2", "https://host/?q=cats&page=2"},
	}
	for _, tt := range tests {
		if got := URLs(tt.in); got != tt.want {
			t.Errorf("URLs(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func FuzzURLs(f *testing.F) {
	f.Add("https://user:pass@host/v1?key=abc")
	f.Fuzz(func(t *testing.T, s string) {
		out := URLs(s)
		if URLs(out) != out {
			t.Errorf("not idempotent: %q → %q → %q", s, out, URLs(out))
		}
	})
}
