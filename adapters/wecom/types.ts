/** The WeCom adapter's config and the fields Herald reads from WeCom's XML callbacks. */

/** What `createWecomAdapter` takes. */
export interface WecomAdapterConfig {
  corpId: string;
  agentId: number;
  /** The app's Secret. Never logged. */
  secret: string;
  /** The callback Token. Never logged. */
  token: string;
  /** The callback EncodingAESKey (43 characters). Never logged. */
  encodingAesKey: string;
  /** e.g. `https://qyapi.weixin.qq.com`. */
  apiUrl: string;
  /** Oldest signed timestamp accepted. @defaultValue 300000 */
  maxSkewMs?: number | undefined;
}

/** A decrypted callback message: the fields of its XML Herald reads. */
export interface WecomMessage {
  toUser: string;
  fromUser: string;
  createTime: number;
  msgType: string;
  content?: string | undefined;
  msgId?: string | undefined;
  mediaId?: string | undefined;
  fileName?: string | undefined;
  event?: string | undefined;
  agentId?: string | undefined;
}
