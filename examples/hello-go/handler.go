package hello

import (
	"context"
	"fmt"
	"os"
	"runtime"
)

// Event is decoded from the request's JSON body ({} when there is none).
type Event struct {
	Name string `json:"name"`
}

func Handle(ctx context.Context, event Event) (map[string]string, error) {
	name := event.Name
	if name == "" {
		name = "world"
	}
	return map[string]string{
		"message": fmt.Sprintf("%s, %s!", os.Getenv("GREETING"), name),
		"runtime": runtime.Version(),
	}, nil
}
