package sless

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestNewHandlerAcceptsTheDocumentedSignatures(t *testing.T) {
	type ctxStruct struct {
		Path string `json:"path"`
	}
	good := map[string]any{
		"raw event, result":        func(context.Context, json.RawMessage) (any, error) { return nil, nil },
		"typed event and context":  func(context.Context, map[string]any, ctxStruct) (string, error) { return "", nil },
		"struct event, error only": func(context.Context, struct{ A int }) error { return nil },
		"context as a map":         func(context.Context, json.RawMessage, map[string]any) ([]byte, error) { return nil, nil },
	}
	for name, fn := range good {
		if _, err := newHandler(fn); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewHandlerRejectsOtherSignaturesNamingTheExpectedOne(t *testing.T) {
	bad := map[string]any{
		"not a function":     42,
		"no context.Context": func(json.RawMessage) (any, error) { return nil, nil },
		"no event":           func(context.Context) (any, error) { return nil, nil },
		"too many arguments": func(context.Context, any, any, any) (any, error) { return nil, nil },
		"no error result":    func(context.Context, any) any { return nil },
		"error not last":     func(context.Context, any) (error, any) { return nil, nil },
	}
	for name, fn := range bad {
		_, err := newHandler(fn)
		if err == nil || !strings.Contains(err.Error(), "func Handle(ctx context.Context, event E[, c C]) (R, error)") {
			t.Errorf("%s: got %v, want an error naming the expected signature", name, err)
		}
	}
}

func TestToResponseMapsResultsLikeTheOtherRuntimes(t *testing.T) {
	type reply struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers,omitempty"`
		Body       any               `json:"body,omitempty"`
	}
	cases := []struct {
		name        string
		in          any
		status      int
		contentType string
		body        string
	}{
		{"nil", nil, 204, "", ""},
		{"nil pointer", (*reply)(nil), 204, "", ""},
		{"string", "hi", 200, "text/plain; charset=utf-8", "hi"},
		{"bytes", []byte{1, 2}, 200, "application/octet-stream", "\x01\x02"},
		{"map", map[string]int{"a": 1}, 200, "application/json", `{"a":1}`},
		{"slice", []int{1, 2}, 200, "application/json", `[1,2]`},
		{"number", 3, 200, "application/json", `3`},
		{"response struct, string body", reply{StatusCode: 201, Body: "made"}, 201, "text/plain; charset=utf-8", "made"},
		{"response struct, object body", reply{StatusCode: 202, Body: map[string]bool{"ok": true}}, 202, "application/json", `{"ok":true}`},
		{"response map, own content type", map[string]any{"statusCode": 200, "headers": map[string]string{"Content-Type": "text/html"}, "body": "<p>"}, 200, "text/html", "<p>"},
		{"response without body", map[string]any{"statusCode": 304}, 304, "", ""},
	}
	for _, c := range cases {
		r, err := toResponse(c.in)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ct := ""
		for k, v := range r.headers {
			if strings.EqualFold(k, "content-type") {
				ct = v
			}
		}
		if r.status != c.status || ct != c.contentType || string(r.body) != c.body {
			t.Errorf("%s: got %d %q %q, want %d %q %q", c.name, r.status, ct, r.body, c.status, c.contentType, c.body)
		}
	}
}

func TestCallTurnsPanicsAndUndecodableEventsIntoErrors(t *testing.T) {
	h, _ := newHandler(func(context.Context, map[string]any) (any, error) { panic("kaput") })
	if _, err := h.call(context.Background(), []byte(`{}`), invocation{}); err == nil || !strings.Contains(err.Error(), "panic: kaput") {
		t.Errorf("panic: got %v", err)
	}
	_, err := h.call(context.Background(), []byte(`"a string"`), invocation{})
	var bad badEventError
	if !errors.As(err, &bad) {
		t.Errorf("a string event for a map parameter: got %v, want a badEventError (400)", err)
	}
}

func TestEventJSON(t *testing.T) {
	for in, want := range map[string]string{"": "{}", `{"a":1}`: `{"a":1}`, "plain": `"plain"`, "NaN": `"NaN"`} {
		if got := string(eventJSON([]byte(in))); got != want {
			t.Errorf("eventJSON(%q) = %s, want %s", in, got, want)
		}
	}
}
