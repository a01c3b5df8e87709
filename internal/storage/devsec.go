package storage

import (
	"slices"
	"sync"
	"time"

	"github.com/dbprobe/dbprobe/internal/monitor"
	"github.com/dbprobe/dbprobe/internal/result"
)

// deviceTick is how often the table's device is read while the
// experiment runs: the per-second figures the issue asks for, against
// which a burst (a cloud disk's credit, a cache in front of it) shows
// beside the sustained rate.
const deviceTick = time.Second

// saturatedUtil is the utilisation from which a second counts as the
// device saturated: /proc/diskstats' busy time rounds to milliseconds,
// so a second fully busy may read 99.x%.
const saturatedUtil = 99.0

// deviceSampler reads the table's device every deviceTick on a goroutine
// of its own, from the start of the measured part to its end.
type deviceSampler struct {
	device string
	stop   chan struct{}
	once   sync.Once
	done   chan struct{}
	mu     sync.Mutex
	points []devicePoint
}

// devicePoint is the device's counters at one instant.
type devicePoint struct {
	at time.Time
	c  monitor.DiskCounters
}

// startDeviceSampler starts reading device; nil when there is none.
func startDeviceSampler(device string) *deviceSampler {
	if device == "" {
		return nil
	}
	s := &deviceSampler{device: device, stop: make(chan struct{}), done: make(chan struct{})}
	s.read()
	go func() {
		defer close(s.done)
		t := time.NewTicker(deviceTick)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				s.read()
				return
			case <-t.C:
				s.read()
			}
		}
	}()
	return s
}

func (s *deviceSampler) read() {
	c, err := monitor.ReadDisk(s.device)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.points = append(s.points, devicePoint{at: time.Now(), c: c})
	s.mu.Unlock()
}

// end stops the sampler and adds its per-second figures, elapsed from
// origin, and their bursts to f, the device's figures over the measured
// part; with f nil (an experiment that reads no counters around its
// steps) they are made from its first and last readings.
func (s *deviceSampler) end(f *result.DeviceFigures, origin time.Time) *result.DeviceFigures {
	if s == nil {
		return f
	}
	s.once.Do(func() { close(s.stop) })
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.points) < 2 {
		return f
	}
	if f == nil {
		first, last := s.points[0], s.points[len(s.points)-1]
		f = delta{seconds: last.at.Sub(first.at).Seconds(), disk: last.c.Sub(first.c), haveDisk: true}.figures()
		if f == nil {
			return nil
		}
	}
	f.PerSecond = deviceSeconds(s.points, origin)
	f.Bursts = deviceBursts(f.PerSecond)
	return f
}

// deviceSeconds turns consecutive readings into each interval's figures,
// as iostat -x does: IO/s, bytes per request, await (the time the
// requests took, summed, over their count) and utilisation (the time IO
// was in flight over the interval).
func deviceSeconds(points []devicePoint, origin time.Time) []result.DeviceSecond {
	var out []result.DeviceSecond
	for i := 1; i < len(points); i++ {
		secs := points[i].at.Sub(points[i-1].at).Seconds()
		if secs <= 0 {
			continue
		}
		k := points[i].c.Sub(points[i-1].c)
		ios := float64(k.Reads + k.Writes)
		d := result.DeviceSecond{Elapsed: round3(points[i].at.Sub(origin).Seconds()), Seconds: round3(secs),
			ReadRate: float64(k.ReadBytes) / secs, WriteRate: float64(k.WriteBytes) / secs, IOPS: ios / secs,
			UtilPct: min(100, float64(k.IOMillis)/(secs*1000)*100)}
		if ios > 0 {
			d.AvgRequestBytes = float64(k.ReadBytes+k.WriteBytes) / ios
			d.AwaitMs = float64(k.ReadMillis+k.WriteMillis) / ios
		}
		out = append(out, d)
	}
	return out
}

// deviceBursts holds the busiest second against the median one: of the
// bytes moved (read and written), of the IO/s, of await, and the share
// of seconds the device was saturated. Seconds cut short (the last one)
// are left out, as the rate series leaves them out.
func deviceBursts(secs []result.DeviceSecond) *result.DeviceBursts {
	var bytes, iops, await []float64
	b := &result.DeviceBursts{}
	for _, s := range secs {
		if s.Seconds < minSpanShare {
			continue
		}
		rate := s.ReadRate + s.WriteRate
		if rate > b.MaxRate {
			b.MaxRate, b.MaxAt = rate, s.Elapsed
		}
		bytes = append(bytes, rate)
		iops = append(iops, s.IOPS)
		await = append(await, s.AwaitMs)
		if s.UtilPct >= saturatedUtil {
			b.SaturatedShare++
		}
	}
	if len(bytes) == 0 {
		return nil
	}
	b.Seconds = len(bytes)
	b.SaturatedShare /= float64(len(bytes))
	for _, v := range [][]float64{bytes, iops, await} {
		slices.Sort(v)
	}
	b.MedianRate = median(bytes)
	b.MedianIOPS, b.MaxIOPS = median(iops), iops[len(iops)-1]
	b.MedianAwaitMs, b.MaxAwaitMs = median(await), await[len(await)-1]
	return b
}
