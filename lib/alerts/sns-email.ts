/**
 * The `email` channel's sender on AWS: SNS Publish to the channel's topic, whose e-mail
 * subscriptions the construct created (cdk/alerts.ts). SNS limits: `Subject` ≤ 100 printable
 * ASCII characters, message ≤ 256 KB (Amazon SNS API reference, "Publish"); format.ts keeps
 * within both.
 */
import { PublishCommand } from "@aws-sdk/client-sns";
import type { AwsClients } from "../aws/clients.js";
import type { EmailPublisher } from "./send.js";

/** Publishes alert e-mails with the bundle's SNS client. */
export function snsEmailPublisher(clients: Pick<AwsClients, "sns">): EmailPublisher {
  return async (topicArn, subject, message) => {
    const sns = await clients.sns();
    await sns.send(new PublishCommand({ TopicArn: topicArn, Subject: subject, Message: message }));
  };
}
