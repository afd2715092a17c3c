package beamjob

import "testing"

func TestNewestJobID(t *testing.T) {
	for _, tc := range []struct {
		body, want string
		err        bool
	}{
		{`{"jobs":[]}`, "", false},
		{`{"jobs":[{"jid":"a","state":"FAILED","start-time":100},{"jid":"b","state":"RUNNING","start-time":200}]}`, "b", false},
		{`{"jobs":[{"jid":"b","start-time":200},{"jid":"a","start-time":100}]}`, "b", false},
		{`{"jobs":[{"jid":"a","start-time":-1}]}`, "a", false},
		{`<html>`, "", true},
	} {
		got, err := newestJobID([]byte(tc.body))
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %q, %v; want %q, error %t", tc.body, got, err, tc.want, tc.err)
		}
	}
}
