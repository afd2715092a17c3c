package workloadmetrics

import (
	"strconv"

	dto "github.com/prometheus/client_model/go"
)

type dtoMetric struct{ Metric dto.Metric }

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
