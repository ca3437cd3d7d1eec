package proc

import (
	"os"
	"runtime"
	"testing"
)

func TestField(t *testing.T) {
	status := "Name:\ttoolport\nVmPeak:\t  20000 kB\nVmHWM:\t   1234 kB\nVmRSS:\t 1000 kB\n"
	tests := []struct {
		key, want string
		ok        bool
	}{
		{"VmHWM", "1234 kB", true},
		{"Name", "toolport", true},
		{"Vm", "", false}, // a prefix of a key is not the key
		{"VmSwap", "", false},
	}
	for _, tt := range tests {
		got, ok := field(status, tt.key)
		if got != tt.want || ok != tt.ok {
			t.Errorf("field(%q) = %q, %v; want %q, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
}

func TestAddress(t *testing.T) {
	tests := []struct {
		line, want string
		err        bool
	}{
		{"toolport: serving on http://127.0.0.1:4242/\n", "http://127.0.0.1:4242", false},
		{"serving on http://127.0.0.1:1\n", "http://127.0.0.1:1", false},
		{"listening\n", "", true},
		{"serving on ftp://x\n", "", true},
	}
	for _, tt := range tests {
		got, err := address(tt.line)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("address(%q) = %q, %v", tt.line, got, err)
		}
	}
}

func TestStatusOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux's")
	}
	if got := StatusBytes(os.Getpid(), "VmHWM"); got <= 0 {
		t.Errorf("StatusBytes(self, VmHWM) = %d, want a size", got)
	}
	if got := Status(os.Getpid(), "NoSuchField"); got != "?" {
		t.Errorf("Status(self, NoSuchField) = %q, want ?", got)
	}
	if got := Status(-1, "VmHWM"); got != "?" {
		t.Errorf("Status(-1) = %q, want ?", got)
	}
}
