package deviceplugin

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// watcher turns file-system events into the supervisor's triggers: the
// kubelet socket being created (kubelet restart) and the config file
// changing (including ConfigMap-style symlink swaps of its directory).
type watcher struct {
	fs               *fsnotify.Watcher
	kubeletRestarted chan struct{}
	configChanged    chan struct{}
	errors           chan error
	done             chan struct{}
}

func newWatcher(pluginDir, kubeletSock, configFile string) (*watcher, error) {
	if fi, err := os.Stat(pluginDir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s", errNoPluginDir, pluginDir)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("creating file watcher: %w", err)
	}
	if err := fw.Add(pluginDir); err != nil {
		fw.Close()
		return nil, fmt.Errorf("watching %s: %w", pluginDir, err)
	}
	configDir, configBase := "", ""
	if configFile != "" {
		configDir, configBase = filepath.Dir(configFile), filepath.Base(configFile)
		if err := fw.Add(configDir); err != nil {
			fw.Close()
			return nil, fmt.Errorf("watching config directory %s: %w", configDir, err)
		}
	}
	w := &watcher{
		fs:               fw,
		kubeletRestarted: make(chan struct{}, 1),
		configChanged:    make(chan struct{}, 1),
		errors:           make(chan error, 1),
		done:             make(chan struct{}),
	}
	go func() {
		defer close(w.done)
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				switch {
				case ev.Name == kubeletSock && ev.Has(fsnotify.Create):
					notify(w.kubeletRestarted)
				case configBase != "" && filepath.Dir(ev.Name) == configDir &&
					(filepath.Base(ev.Name) == configBase || filepath.Base(ev.Name) == "..data") &&
					!ev.Has(fsnotify.Chmod):
					notify(w.configChanged)
				}
			case err, ok := <-fw.Errors:
				if !ok {
					return
				}
				select {
				case w.errors <- err:
				default:
				}
			}
		}
	}()
	return w, nil
}

// notify sends without blocking on a channel of capacity one.
func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Close stops watching.
func (w *watcher) Close() error {
	err := w.fs.Close()
	<-w.done
	return err
}
