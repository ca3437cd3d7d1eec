package mcpserver

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

func TestReadLine(t *testing.T) {
	const limit = 10
	in := "short\r\n" + strings.Repeat("x", 200) + "\nexactly10!\n" + strings.Repeat("y", limit+1) + "\r\nno newline"
	br := bufio.NewReaderSize(strings.NewReader(in), 16) // lines longer than the buffer come in chunks
	want := []line{
		{data: []byte("short")},
		{tooLong: true},
		{data: []byte("exactly10!")},
		{tooLong: true},
		{data: []byte("no newline")},
		{err: io.EOF},
	}
	for i, w := range want {
		got := readLine(br, limit)
		if string(got.data) != string(w.data) || got.tooLong != w.tooLong || got.err != w.err {
			t.Errorf("line %d = {%q tooLong=%v err=%v}, want {%q tooLong=%v err=%v}", i, got.data, got.tooLong, got.err, w.data, w.tooLong, w.err)
		}
	}
}

func TestDepth(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{`1`, 0}, {`{}`, 1}, {`[[{"a":[]}]]`, 4}, {`{"a":"[[[[\"]]"}`, 1}, {`[[],[[]]]`, 3},
	}
	for _, tt := range tests {
		if got := depth([]byte(tt.in)); got != tt.want {
			t.Errorf("depth(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
