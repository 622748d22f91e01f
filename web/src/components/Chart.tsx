import { useEffect, useRef, useState } from 'react';
import { CandlestickSeries, ColorType, createChart, HistogramSeries, type IChartApi, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts';
import { store, useStore } from '../state.js';
import { api, call, errorText } from '../lib/api.js';
import { foldTrade, fromWire, INTERVALS, type Bar, type Interval, type WireCandle } from '../lib/candles.js';
import { decimalsOf, wireUnits } from '../lib/decimal.js';

const n = (u: bigint): number => Number(u) / 1e8;
const candle = (b: Bar) => ({ time: (b.t / 1000) as UTCTimestamp, open: n(b.o), high: n(b.h), low: n(b.l), close: n(b.c) });
const volume = (b: Bar) => ({ time: (b.t / 1000) as UTCTimestamp, value: n(b.v), color: b.c >= b.o ? 'rgba(38,166,154,0.45)' : 'rgba(239,83,80,0.45)' });

const tradeTime = (t: Record<string, unknown>): number => (typeof t.createdAt === 'number' ? t.createdAt : Date.parse(String(t.createdAt)));

export function Chart() {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<{ api: IChartApi; candles: ISeriesApi<'Candlestick'>; volume: ISeriesApi<'Histogram'> } | null>(null);
  const [interval, setInterval_] = useState<Interval>('1m');
  const [count, setCount] = useState(0);
  const instrument = useStore((s) => s.selected);
  const increment = useStore((s) => s.instruments.find((i) => i.id === s.selected)?.priceIncrement);


  useEffect(() => {
    const c = createChart(el.current!, {
      autoSize: true,
      localization: { locale: 'en-US' },
      layout: { background: { type: ColorType.Solid, color: '#0f1419' }, textColor: '#9aa4b2', attributionLogo: false },
      grid: { vertLines: { color: '#1c232c' }, horzLines: { color: '#1c232c' } },
      timeScale: { timeVisible: true, secondsVisible: false, borderColor: '#242c36', rightOffset: 6, barSpacing: 9 },
      rightPriceScale: { borderColor: '#242c36' },
    });
    const candles = c.addSeries(CandlestickSeries, { upColor: '#26a69a', downColor: '#ef5350', wickUpColor: '#26a69a', wickDownColor: '#ef5350', borderVisible: false });
    const vol = c.addSeries(HistogramSeries, { priceScaleId: 'vol', priceFormat: { type: 'volume' } });
    c.priceScale('vol').applyOptions({ scaleMargins: { top: 0.8, bottom: 0 } });
    chart.current = { api: c, candles, volume: vol };
    return () => {
      c.remove();
      chart.current = null;
    };
  }, []);

  // Price labels at the instrument's tick, not at the chart's default two decimals of a flat candle.
  useEffect(() => {
    if (!chart.current || increment === undefined) return;
    const minMove = Number(increment);
    chart.current.candles.applyOptions({ priceFormat: { type: 'price', minMove, precision: decimalsOf(String(increment)) } });
  }, [increment]);

  useEffect(() => {
    let bars: Bar[] = [];
    let live = true;
    const pending: Array<Record<string, unknown>> = [];
    const apply = (t: Record<string, unknown>) => {
      const bar = foldTrade(bars, { price: wireUnits(t.fillPrice as number), quantity: wireUnits(t.fillQuantity as number), time: tradeTime(t) }, interval);
      if (bar && chart.current) {
        chart.current.candles.update(candle(bar));
        chart.current.volume.update(volume(bar));
        setCount(bars.length);
      }
    };
    let loaded = false;
    const off = store.onTrade((t) => (loaded ? apply(t) : pending.push(t)));
    const load = async () => {
      const sentAt = Date.now();
      try {
        const list = await call(() => api.GET('/api/market/{instrument}/candles', { params: { path: { instrument }, query: { interval } } }));
        if (!live || !chart.current) return;
        bars = (list as WireCandle[]).map(fromWire);
        chart.current.candles.setData(bars.map(candle));
        chart.current.volume.setData(bars.map(volume));
        loaded = true;
        // Trades from before the request are in the answer already; later ones are folded in.
        for (const t of pending.splice(0)) if (tradeTime(t) >= sentAt) apply(t);
        setCount(bars.length);
      } catch (e) {
        store.toast('error', `Chart: ${errorText(e)}`);
      }
    };
    void load();
    const offReconnect = store.rt?.onReconnect(() => void load());
    return () => {
      live = false;
      off();
      offReconnect?.();
    };
  }, [instrument, interval]);

  return (
    <div className="chart">
      <div className="chart-bar" role="toolbar" aria-label="Candle interval">
        {(Object.keys(INTERVALS) as Interval[]).map((i) => (
          <button key={i} className={i === interval ? 'active' : ''} aria-pressed={i === interval} onClick={() => setInterval_(i)}>{i}</button>
        ))}
        <span className="muted" data-testid="candle-count">{count} candles</span>
      </div>
      <div className="chart-canvas" ref={el} data-testid="chart" />
    </div>
  );
}
