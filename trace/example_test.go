package trace_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fairsched/fairsched"
	"github.com/fairsched/fairsched/trace"
)

// Record a scheduler's runs, with the tenant of each key its first path
// element, and read the trace back.
func ExampleNewRecorder() {
	s, err := fairsched.New(fairsched.WithMaxConcurrency(4))
	if err != nil {
		panic(err)
	}
	if err := s.RegisterType("render", fairsched.JobTypeConfig{DefaultCost: time.Second, Priority: 4}); err != nil {
		panic(err)
	}
	var file bytes.Buffer // a file in production: os.Create
	tenant := func(key string) string { t, _, _ := strings.Cut(key, "/"); return t }
	rec, err := trace.NewRecorder(s, &file, trace.WithTenant(tenant))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, key := range []string{"acme/alice", "bolt/bob"} {
		if err := s.RunSync(ctx, "render", "report", key, func(context.Context) error { return nil }); err != nil {
			panic(err)
		}
	}
	if err := s.Close(ctx); err != nil {
		panic(err)
	}
	if err := rec.Close(ctx); err != nil {
		panic(err)
	}
	recs, err := trace.Read(&file)
	if err != nil {
		panic(err)
	}
	for _, r := range recs {
		fmt.Println(r.Type, r.ID, r.Key, r.Tenant)
	}
	fmt.Printf("%+v\n", rec.Stats())
	// Output:
	// render report acme/alice acme
	// render report bolt/bob bolt
	// {Written:2 Dropped:0 WriteErrors:0}
}
