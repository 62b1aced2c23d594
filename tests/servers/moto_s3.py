"""A real S3 implementation with signature checking on, for gpuemu's S3 tests: moto's server (pinned
in scripts/install-deps.sh) on 127.0.0.1, authentication enabled after its setup.

moto checks nothing until INITIAL_NO_AUTH_ACTION_COUNT actions have run. This script spends exactly
those actions on the setup (an IAM user, its access key and policy, a bucket), then proves that the
server now checks: a request signed with a wrong secret must get 403 SignatureDoesNotMatch and one
with the right secret must pass, else it exits 1. Then it prints one JSON line
{"port", "access_key", "secret_key", "region", "bucket"} and serves until killed.
"""
import argparse
import json
import logging
import os
import sys
import threading

SETUP_ACTIONS = 4  # create_user, create_access_key, put_user_policy, create_bucket
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_ACTIONS)  # read when moto.settings is imported
os.environ.setdefault("AWS_ACCESS_KEY_ID", "setup")  # the unchecked setup calls still need some
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "setup")

import boto3  # noqa: E402  (after the environment moto reads at import)
import botocore.config  # noqa: E402
import botocore.exceptions  # noqa: E402
from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: E402

POLICY = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}


def client(service, endpoint, region, key, secret):
    config = botocore.config.Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1})
    return boto3.client(service, endpoint_url=endpoint, region_name=region, aws_access_key_id=key,
                        aws_secret_access_key=secret, config=config)


def error_code(call) -> str:
    try:
        call()
    except botocore.exceptions.ClientError as error:
        return error.response["Error"]["Code"]
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--region", default="eu-central-1")
    parser.add_argument("--bucket", default="gpuemu-baselines")
    args = parser.parse_args()

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request on stderr
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = "http://127.0.0.1:%d" % server.get_host_and_port()[1]
    iam = client("iam", endpoint, args.region, "setup", "setup")
    iam.create_user(UserName="gpuemu-ci")
    key = iam.create_access_key(UserName="gpuemu-ci")["AccessKey"]
    iam.put_user_policy(UserName="gpuemu-ci", PolicyName="s3", PolicyDocument=json.dumps(POLICY))
    access_key, secret_key = key["AccessKeyId"], key["SecretAccessKey"]
    s3 = client("s3", endpoint, args.region, access_key, secret_key)
    s3.create_bucket(Bucket=args.bucket, CreateBucketConfiguration={"LocationConstraint": args.region})

    # From here on moto checks every signature: prove it, both ways.
    forged = client("s3", endpoint, args.region, access_key, secret_key + "x")
    refused = error_code(lambda: forged.list_objects_v2(Bucket=args.bucket))
    accepted = error_code(lambda: s3.list_objects_v2(Bucket=args.bucket))
    if refused != "SignatureDoesNotMatch" or accepted:
        print(f"moto_s3: signature checking is not on (a wrong secret got {refused or 'no error'}, "
              f"the right one {accepted or 'no error'})", file=sys.stderr)
        return 1
    print(json.dumps({"port": server.get_host_and_port()[1], "access_key": access_key, "secret_key": secret_key,
                      "region": args.region, "bucket": args.bucket}), flush=True)
    threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
