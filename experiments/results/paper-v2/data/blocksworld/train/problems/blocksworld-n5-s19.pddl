; domains.blocksworld.generator: blocks=5, seed=19, split=train
(define (problem blocksworld-n5-s19-train)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b3)
    (on-table b2)
    (on b3 b2)
    (on b4 b1)
    (on b5 b4)
    (clear b5)
  )
  (:goal (and
    (on b1 b2)
    (on b4 b1)
    (on b5 b3)
  ))
)
