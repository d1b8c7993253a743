// Package sless is the Go runtime server of sless (CONTRACT.md §4), standard library only.
//
// The function is a Go package (not main) at the root of the function folder that declares
//
//	func Handle(ctx context.Context, event E) (R, error)
//	func Handle(ctx context.Context, event E, c C) (R, error)
//
// E is json.RawMessage (the event's JSON as is) or any type the event's JSON decodes into
// (map[string]any, a struct, string, ...). C receives the invocation context
// {method, path, query, headers, function, namespace, deadline} decoded into whatever type the
// function declares (see runtimes/README.md for a ready struct). ctx carries the deadline.
// R maps to the response as in the other runtimes; []byte is sent as application/octet-stream.
// build.sh generates the main package that calls Main(function.Handle).
package sless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type settings struct {
	port      string
	host      string
	timeout   time.Duration
	function  string
	namespace string
}

func readSettings() (settings, error) {
	s := settings{port: "8080", timeout: 30 * time.Second, function: os.Getenv("SLESS_FUNCTION_NAME"), namespace: os.Getenv("SLESS_NAMESPACE")}
	if p := os.Getenv("PORT"); p != "" {
		s.port = p
	}
	// Unset: every interface (what an image needs); `sless dev` sets 127.0.0.1.
	s.host = os.Getenv("SLESS_BIND_ADDRESS")
	if t := os.Getenv("SLESS_TIMEOUT_SEC"); t != "" {
		sec, err := strconv.ParseFloat(t, 64)
		if err != nil || sec <= 0 {
			return s, fmt.Errorf("SLESS_TIMEOUT_SEC=%q is not a positive number of seconds", t)
		}
		s.timeout = time.Duration(sec * float64(time.Second))
	}
	return s, nil
}

// invocation is the context handed to a handler that takes one.
type invocation struct {
	Method    string            `json:"method"`
	Path      string            `json:"path"`
	Query     map[string]string `json:"query"`
	Headers   map[string]string `json:"headers"`
	Function  string            `json:"function"`
	Namespace string            `json:"namespace"`
	Deadline  string            `json:"deadline"`
}

// handler is the user's Handle, checked once at start and called through reflection.
type handler struct {
	fn          reflect.Value
	eventType   reflect.Type
	contextType reflect.Type // nil when Handle takes no context argument
	returnsData bool         // (R, error) rather than error
}

var (
	ctxType   = reflect.TypeOf((*context.Context)(nil)).Elem()
	errType   = reflect.TypeOf((*error)(nil)).Elem()
	rawType   = reflect.TypeOf(json.RawMessage(nil))
	bytesType = reflect.TypeOf([]byte(nil))
)

func newHandler(fn any) (*handler, error) {
	v := reflect.ValueOf(fn)
	t := v.Type()
	const want = "func Handle(ctx context.Context, event E[, c C]) (R, error)"
	if t.Kind() != reflect.Func {
		return nil, fmt.Errorf("Handle is a %s, want %s", t, want)
	}
	if t.NumIn() < 2 || t.NumIn() > 3 || t.In(0) != ctxType {
		return nil, fmt.Errorf("Handle has signature %s, want %s", t, want)
	}
	if t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != errType {
		return nil, fmt.Errorf("Handle has signature %s, want %s (the last result must be error)", t, want)
	}
	h := &handler{fn: v, eventType: t.In(1), returnsData: t.NumOut() == 2}
	if t.NumIn() == 3 {
		h.contextType = t.In(2)
	}
	return h, nil
}

// eventJSON is the body if it is JSON, the body as a JSON string if not, {} when there is none.
func eventJSON(body []byte) []byte {
	if len(body) == 0 {
		return []byte("{}")
	}
	if json.Valid(body) {
		return body
	}
	s, _ := json.Marshal(string(body))
	return s
}

// badEventError marks an event the handler's parameter type cannot hold: the caller's fault (400).
type badEventError struct{ err error }

func (e badEventError) Error() string { return e.err.Error() }

func decodeInto(t reflect.Type, data []byte, what string) (reflect.Value, error) {
	if t == rawType {
		return reflect.ValueOf(json.RawMessage(data)), nil
	}
	ptr := reflect.New(t)
	if err := json.Unmarshal(data, ptr.Interface()); err != nil {
		return reflect.Value{}, badEventError{fmt.Errorf("the %s does not fit Handle's parameter type %s: %v", what, t, err)}
	}
	return ptr.Elem(), nil
}

func (h *handler) call(ctx context.Context, event []byte, inv invocation) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "sless-runtime: handler panic: %v\n%s", p, debug.Stack())
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	ev, err := decodeInto(h.eventType, event, "event")
	if err != nil {
		return nil, err
	}
	args := []reflect.Value{reflect.ValueOf(ctx), ev}
	if h.contextType != nil {
		invJSON, _ := json.Marshal(inv)
		c, err := decodeInto(h.contextType, invJSON, "context")
		if err != nil {
			return nil, err
		}
		args = append(args, c)
	}
	out := h.fn.Call(args)
	if e := out[len(out)-1]; !e.IsNil() {
		return nil, e.Interface().(error)
	}
	if h.returnsData {
		return out[0].Interface(), nil
	}
	return nil, nil
}

type response struct {
	status  int
	headers map[string]string
	body    []byte
}

func hasHeader(headers map[string]string, name string) bool {
	for k := range headers {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// toResponse maps a result as the other runtimes do: it goes through JSON first, so a struct with a
// `json:"statusCode"` field is a response object just like a map is.
func toResponse(result any) (response, error) {
	if b, ok := result.([]byte); ok && b != nil {
		return response{200, map[string]string{"Content-Type": "application/octet-stream"}, b}, nil
	}
	data, err := json.Marshal(result)
	if err != nil {
		return response{}, fmt.Errorf("the result cannot be encoded as JSON: %w", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return response{}, err
	}
	switch v := generic.(type) {
	case nil:
		return response{status: http.StatusNoContent}, nil
	case string:
		return response{200, map[string]string{"Content-Type": "text/plain; charset=utf-8"}, []byte(v)}, nil
	case map[string]any:
		if n, ok := v["statusCode"].(json.Number); ok {
			if status, err := n.Int64(); err == nil {
				return responseObject(int(status), v)
			}
		}
	}
	return response{200, map[string]string{"Content-Type": "application/json"}, data}, nil
}

func responseObject(status int, v map[string]any) (response, error) {
	if status < 100 || status > 599 {
		return response{}, fmt.Errorf("statusCode %d is not an HTTP status (100-599)", status)
	}
	headers := map[string]string{}
	if hs, ok := v["headers"].(map[string]any); ok {
		for k, val := range hs {
			headers[k] = fmt.Sprint(val)
		}
	}
	switch body := v["body"].(type) {
	case nil:
		return response{status, headers, nil}, nil
	case string:
		if !hasHeader(headers, "content-type") {
			headers["Content-Type"] = "text/plain; charset=utf-8"
		}
		return response{status, headers, []byte(body)}, nil
	default:
		data, err := json.Marshal(body)
		if err != nil {
			return response{}, err
		}
		if !hasHeader(headers, "content-type") {
			headers["Content-Type"] = "application/json"
		}
		return response{status, headers, data}, nil
	}
}

// joinValues joins repeated query keys and headers with "," (as API Gateway's payload 2.0 does).
func joinValues(values map[string][]string, lower bool) map[string]string {
	out := make(map[string]string, len(values))
	for k, vs := range values {
		if lower {
			k = strings.ToLower(k)
		}
		if prev, ok := out[k]; ok {
			vs = append([]string{prev}, vs...)
		}
		out[k] = strings.Join(vs, ",")
	}
	return out
}

func formatDeadline(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func writeJSONError(w http.ResponseWriter, status int, err error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request, s settings) {
	if r.Method == http.MethodGet && r.URL.Path == "/health" {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}`))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, fmt.Errorf("reading the request body: %w", err))
		return
	}
	deadline := time.Now().Add(s.timeout)
	headers := joinValues(r.Header, true)
	headers["host"] = r.Host // net/http moves Host out of the header map; the other runtimes keep it
	inv := invocation{Method: r.Method, Path: r.URL.Path, Query: joinValues(r.URL.Query(), false), Headers: headers,
		Function: s.function, Namespace: s.namespace, Deadline: formatDeadline(deadline)}
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	result, err := h.call(ctx, eventJSON(body), inv)
	var resp response
	if err == nil {
		resp, err = toResponse(result)
	}
	if err != nil {
		var bad badEventError
		if errors.As(err, &bad) {
			writeJSONError(w, http.StatusBadRequest, err)
			return
		}
		fmt.Fprintf(os.Stderr, "sless-runtime: handler error on %s %s: %v\n", r.Method, r.URL.Path, err)
		writeJSONError(w, http.StatusInternalServerError, err)
		return
	}
	for k, v := range resp.headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

func runJob(h *handler, s settings) int {
	// stdout carries the result line only: the function's own output goes to stderr.
	resultOut := os.Stdout
	os.Stdout = os.Stderr
	deadline := time.Now().Add(s.timeout)
	inv := invocation{Query: map[string]string{}, Headers: map[string]string{}, Function: s.function,
		Namespace: s.namespace, Deadline: formatDeadline(deadline)}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	result, err := h.call(ctx, eventJSON([]byte(os.Getenv("SLESS_EVENT"))), inv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	out, err := json.Marshal(result)
	if err != nil {
		fmt.Fprintf(os.Stderr, "the result cannot be encoded as JSON: %v\n", err)
		return 1
	}
	fmt.Fprintln(resultOut, string(out))
	return 0
}

func serve(h *handler, s settings) int {
	srv := &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r, s) }),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(s.host, s.port))
	if err != nil {
		fmt.Fprintf(os.Stderr, "sless-runtime: cannot listen on %s: %v\n", net.JoinHostPort(s.host, s.port), err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Fprintf(os.Stderr, "sless-runtime: serving Handle on port %s\n", s.port)
	select {
	case err := <-errc:
		fmt.Fprintf(os.Stderr, "sless-runtime: server stopped: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	// SIGTERM: stop accepting, let in-flight requests finish (bounded), then exit 0.
	fmt.Fprintln(os.Stderr, "sless-runtime: draining")
	grace := min(s.timeout, 25*time.Second)
	shutdownCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	_ = srv.Shutdown(shutdownCtx)
	return 0
}

// Main runs the function: an HTTP server, or one run in job mode (SLESS_MODE=job). It never returns.
func Main(fn any) {
	s, err := readSettings()
	if err != nil {
		fmt.Fprintf(os.Stderr, "sless-runtime: %v\n", err)
		os.Exit(1)
	}
	h, err := newHandler(fn)
	if err != nil {
		fmt.Fprintf(os.Stderr, "sless-runtime: %v\n", err)
		os.Exit(1)
	}
	if os.Getenv("SLESS_MODE") == "job" {
		os.Exit(runJob(h, s))
	}
	os.Exit(serve(h, s))
}
