package creative

import (
	"context"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"creativeapi/gen/db"
	"creativeapi/internal/events"
	"creativeapi/internal/review"
	"creativeapi/internal/store"
)

// DueInterval is how often the due-date job looks for review stages due
// soon or overdue: the announcements come at most this late.
const DueInterval = 5 * time.Minute

// AnnounceDue writes creative.stage_due_soon for each active review
// stage due within a day, and creative.stage_overdue for each past its
// due date, once per stage and round (docs/review.md, "Review stages"):
// the stages are marked in the transaction that writes their events, so
// replicas running it at once announce each stage once. It returns how
// many it announced.
func AnnounceDue(ctx context.Context, st *store.Store) (int, error) {
	type marked struct {
		creative, org uuid.UUID
	}
	n := 0
	for _, step := range []struct {
		t    events.Type
		mark func(context.Context, *db.Queries) ([]marked, error)
	}{
		{events.CreativeStageDueSoon, func(ctx context.Context, q *db.Queries) ([]marked, error) {
			rows, err := q.ReviewStagesMarkDueSoon(ctx)
			out := make([]marked, len(rows))
			for i, r := range rows {
				out[i] = marked{r.CreativeID, r.OrganizationID}
			}
			return out, err
		}},
		{events.CreativeStageOverdue, func(ctx context.Context, q *db.Queries) ([]marked, error) {
			rows, err := q.ReviewStagesMarkOverdue(ctx)
			out := make([]marked, len(rows))
			for i, r := range rows {
				out[i] = marked{r.CreativeID, r.OrganizationID}
			}
			return out, err
		}},
	} {
		err := st.InTx(ctx, func(q store.Tx) error {
			stages, err := step.mark(ctx, q.Queries)
			if err != nil {
				return err
			}
			evs := make([]events.Event, 0, len(stages))
			for _, s := range stages {
				r, err := q.CreativeGet(ctx, db.CreativeGetParams{OrganizationID: s.org, ID: s.creative})
				if err != nil {
					return err
				}
				// The event's data leaves out what depends on a caller.
				c, err := one(ctx, q.Queries, row{r.Creative, r.AuthorName, r.ReviewerName, r.ClientName, r.TaskName}, review.Caller{})
				if err != nil {
					return err
				}
				evs = append(evs, events.Event{Type: step.t, OrganizationID: s.org, Timestamp: time.Now().UTC(), Data: eventData{Detail: c.Detail}})
			}
			n += len(evs)
			return events.Write(ctx, q.Queries, evs...)
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type dueArgs struct{}

func (dueArgs) Kind() string { return "review_stages_due" }

type dueWorker struct {
	river.WorkerDefaults[dueArgs]
	st  *store.Store
	log *slog.Logger
}

func (w *dueWorker) Timeout(*river.Job[dueArgs]) time.Duration { return time.Minute }

// Work announces the stages due soon or overdue (AnnounceDue).
func (w *dueWorker) Work(ctx context.Context, _ *river.Job[dueArgs]) error {
	n, err := AnnounceDue(ctx, w.st)
	if n > 0 {
		w.log.InfoContext(ctx, "review stages announced due", "stages", n)
	}
	return err
}

// DueJobs registers the due-date worker and returns its periodic job, for
// the replica's River client (webhooks.Config.MoreJobs). River runs a
// periodic job on its leader alone, and AnnounceDue is safe to run twice.
func DueJobs(st *store.Store, log *slog.Logger) func(*river.Workers) ([]*river.PeriodicJob, error) {
	return func(workers *river.Workers) ([]*river.PeriodicJob, error) {
		if err := river.AddWorkerSafely(workers, &dueWorker{st: st, log: log}); err != nil {
			return nil, err
		}
		return []*river.PeriodicJob{river.NewPeriodicJob(river.PeriodicInterval(DueInterval),
			func() (river.JobArgs, *river.InsertOpts) { return dueArgs{}, nil }, &river.PeriodicJobOpts{RunOnStart: true})}, nil
	}
}
