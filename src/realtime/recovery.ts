// Builds the stream part of a subscribe result: the current position, and for a client
// asking to recover, the publications it missed when its position is still in history.
import type { Broker, HistoryPolicy, StreamPosition } from './ports.js';
import { Errors, type ProtocolError } from './codes.js';
import { SubscribeFlag, type SubscribeRequest, type SubscribeResult } from './protocol.js';

export interface StreamPart {
  result: SubscribeResult;
  /** Position the client holds once it has processed the result. */
  position: StreamPosition;
}

export async function resolveStream(
  broker: Broker,
  req: SubscribeRequest,
  policy: HistoryPolicy | null,
  maxRecovered: number,
): Promise<StreamPart | { error: ProtocolError }> {
  if (!policy) {
    // No history: nothing to position or recover; a recover request just isn't honoured.
    return { result: req.recover ? { was_recovering: true } : {}, position: { offset: 0, epoch: '' } };
  }
  const stream: SubscribeResult = {};
  if (req.recoverable) stream.recoverable = true;
  if (req.positioned || req.recoverable) stream.positioned = true;

  if (!req.recover) {
    const top = await broker.history(req.channel, { limit: 0 });
    const position = { offset: top.offset, epoch: top.epoch };
    return { result: { ...stream, offset: top.offset, epoch: top.epoch }, position };
  }

  const since = { offset: Number(req.offset ?? 0), epoch: req.epoch ?? '' };
  // An empty epoch means the client accepts any (centrifuge-js never sends one it holds): a client that
  // subscribed before the channel's first publication (a NATS broker has no epoch yet) holds ''. Its offset
  // counts in the current stream, so the history is read from it in that stream.
  if (since.epoch === '') since.epoch = (await broker.history(req.channel, { limit: 0 })).epoch;
  // One more than allowed, to tell "exactly the limit" from "more were missed".
  const h = await broker.history(req.channel, { since, limit: maxRecovered + 1 });
  const top = { offset: h.offset, epoch: h.epoch };
  const sameStream = since.epoch === h.epoch;
  let recovered = false;
  if (sameStream && since.offset === h.offset) {
    recovered = true; // nothing missed
  } else if (sameStream && since.offset < h.offset) {
    const pubs = h.publications;
    recovered =
      pubs.length > 0 &&
      pubs.length <= maxRecovered &&
      pubs[0].offset === since.offset + 1 &&
      pubs[pubs.length - 1].offset === h.offset;
  }
  if (!recovered) {
    if ((Number(req.flag ?? 0) & SubscribeFlag.rejectUnrecovered) !== 0) {
      return { error: Errors.unrecoverablePosition };
    }
    // The client learns the gap from recovered:false and reloads state; partial history
    // would only mislead it, so none is sent.
    return {
      result: { ...stream, was_recovering: true, recovered: false, offset: top.offset, epoch: top.epoch },
      position: top,
    };
  }
  const publications = h.publications.map((p) => ({ data: p.data, offset: p.offset }));
  return {
    // The stream top, as Centrifugo answers: the client's position ends there once it has delivered the
    // recovered publications, each of which moves it (centrifuge-js sets it from every publication).
    result: {
      ...stream,
      was_recovering: true,
      recovered: true,
      offset: h.offset,
      epoch: h.epoch,
      publications,
    },
    position: top,
  };
}
