package metrics

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reports a pgx pool's statistics, read when scraped.
type poolCollector struct {
	pool *pgxpool.Pool

	maxConns, conns, acquires, acquireSeconds, waits, waitSeconds, canceled, newConns *prometheus.Desc
}

// PoolCollector reports the request pool: its size, connections by state,
// and how often and how long requests waited for a connection (a wait
// longer than DB_ACQUIRE_TIMEOUT answers 503).
func PoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", name), help, labels, nil)
	}
	return &poolCollector{
		pool:           pool,
		maxConns:       desc("max_connections", "Most connections the pool opens (DB_MAX_CONNS)."),
		conns:          desc("connections", "Connections of the pool by state: acquired (in use), idle, constructing.", "state"),
		acquires:       desc("acquires_total", "Connections taken from the pool."),
		acquireSeconds: desc("acquire_seconds_total", "Time spent taking connections from the pool, waits included."),
		waits:          desc("acquire_waits_total", "Acquires that found no idle connection and waited for one to be opened or given back."),
		waitSeconds:    desc("acquire_wait_seconds_total", "Time acquires spent waiting for a connection."),
		canceled:       desc("canceled_acquires_total", "Acquires given up before a connection was free (request deadline or DB_ACQUIRE_TIMEOUT)."),
		newConns:       desc("new_connections_total", "Connections the pool opened."),
	}
}

// Describe implements prometheus.Collector.
func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxConns, c.conns, c.acquires, c.acquireSeconds, c.waits, c.waitSeconds, c.canceled, c.newConns} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.maxConns, float64(s.MaxConns()))
	gauge(c.conns, float64(s.AcquiredConns()), "acquired")
	gauge(c.conns, float64(s.IdleConns()), "idle")
	gauge(c.conns, float64(s.ConstructingConns()), "constructing")
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireSeconds, s.AcquireDuration().Seconds())
	counter(c.waits, float64(s.EmptyAcquireCount()))
	counter(c.waitSeconds, s.EmptyAcquireWaitTime().Seconds())
	counter(c.canceled, float64(s.CanceledAcquireCount()))
	counter(c.newConns, float64(s.NewConnsCount()))
}
