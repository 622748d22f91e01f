/** Messages between ThreadedSqliteJournal and its writer thread. */
export interface WriterInit {
  file: string;
  walAutocheckpointPages: number;
}

export type WriterRequest =
  | { kind: 'write'; id: number; seqs: number[]; tss: number[]; bodies: string[] }
  | { kind: 'close'; id: number };

export type WriterReply = { id: number; ok: true } | { id: number; ok: false; message: string };
