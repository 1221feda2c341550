; domains.blocksworld.generator: blocks=5, seed=15, split=train
(define (problem blocksworld-n5-s15-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b5)
    (on b2 b1)
    (on b3 b2)
    (on b4 b3)
    (on-table b5)
    (clear b4)
  )
  (:goal (and
    (on b1 b4)
    (on b4 b2)
  ))
)
