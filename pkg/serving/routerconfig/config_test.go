package routerconfig

import "testing"

func TestConfigRefused(t *testing.T) {
	for name, cfg := range map[string]string{
		"no release":   `{"name":"m"}`,
		"bad url":      `{"name":"m","releases":[{"name":"a","url":"file:///etc"}]}`,
		"bad weight":   `{"name":"m","releases":[{"name":"a","url":"http://a","weight":101}]}`,
		"bad mode":     `{"name":"m","releases":[{"name":"a","url":"http://a","logger":{"urls":["http://s"],"mode":"some"}}]}`,
		"bad sink url": `{"name":"m","releases":[{"name":"a","url":"http://a","logger":{"urls":["ftp://s"]}}]}`,
	} {
		if _, err := ParseConfig([]byte(cfg)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
